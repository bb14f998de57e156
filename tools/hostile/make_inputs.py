#!/usr/bin/env python3
"""Builds the hostile checkpoint folders of tools/hostile/run.sh from the tiny test checkpoint (standard library only).

    make_inputs.py TINY_CHECKPOINT_FOLDER OUT_FOLDER

Each sub-folder of OUT_FOLDER is the tiny checkpoint with one thing made hostile: a poisoned hyper-parameter, a
lying layer count, NaN weights, a broken tokenizer.json, or a chat template that attacks the renderer.
"""
import json
import os
import shutil
import struct
import sys


def copy(src, out, name):
    dst = os.path.join(out, name)
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns("golden"))
    return dst


def edit_json(path, change):
    with open(path) as f:
        d = json.load(f)
    change(d)
    with open(path, "w") as f:
        json.dump(d, f)


def text_config(change):
    def apply(d):
        change(d["text_config"] if "text_config" in d else d)
    return apply


def main():
    src, out = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)

    poison = {
        "eps-string": lambda c: c.__setitem__("rms_norm_eps", "x"),
        "eps-negative": lambda c: c.__setitem__("rms_norm_eps", -1e-6),
        "hidden-fractional": lambda c: c.__setitem__("hidden_size", 128.7),
        "intermediate-string": lambda c: c.__setitem__("intermediate_size", "256"),
        "rope-theta-zero": lambda c: c["rope_parameters"].__setitem__("rope_theta", 0),
        "layers-1e9": lambda c: c.__setitem__("num_hidden_layers", 1000000000),
        "layers-int-max": lambda c: c.__setitem__("num_hidden_layers", 2147483647),
        "eos-out-of-vocab": lambda c: c.__setitem__("eos_token_id", 99999999),
    }
    for name, change in poison.items():
        edit_json(os.path.join(copy(src, out, "config-" + name), "config.json"), text_config(change))

    # NaN weights: the first floating-point tensor of model.safetensors filled with all-ones bytes (NaN in f32 and bf16)
    d = copy(src, out, "nan-weights")
    path = os.path.join(d, "model.safetensors")
    with open(path, "r+b") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        name = sorted(k for k, v in header.items() if k != "__metadata__" and v["dtype"] in ("F32", "BF16", "F16")
                      and "embed_tokens" in k)[0]
        begin, end = header[name]["data_offsets"]
        f.seek(8 + n + begin)
        f.write(b"\xff" * (end - begin))

    tokenizer = {
        "no-merges": lambda t: t["model"].__setitem__("merges", []),
        "merges-malformed": lambda t: t["model"].__setitem__("merges", ["a"] + t["model"]["merges"][1:]),
        "added-tokens-string": lambda t: t.__setitem__("added_tokens", "x"),
        "normalizer-unsupported": lambda t: t.__setitem__("normalizer", {"type": "Precompiled", "precompiled_charsmap": "AA=="}),
        "byte-tokens-missing": lambda t: t["model"].__setitem__("vocab", {k: v for k, v in t["model"]["vocab"].items() if v >= 256}),
    }
    for name, change in tokenizer.items():
        edit_json(os.path.join(copy(src, out, "tokenizer-" + name), "tokenizer.json"), change)

    templates = {
        "repeat-2e9": b"{{ 'a' * 2000000000 }}",
        "billion-items": b"{% set x = [0] * 1000000000 %}{{ x | length }}",
        "doubling": b"{% set s = namespace(v='ab') %}{% for i in range(40) %}{% set s.v = s.v ~ s.v %}{% endfor %}{{ s.v | length }}",
        "nested-30000": b"{% if true %}" * 30000 + b"x" + b"{% endif %}" * 30000,
        "loops-1e10": b"{% for i in range(100000) %}{% for j in range(100000) %}x{% endfor %}{% endfor %}",
        "syntax-error": b"{% for m in messages %}{{ m.content }",
        "bad-utf8": b"{{ '\xff\xfe' }}{% for m in messages %}{{ m.content }}{% endfor %}",
    }
    for name, body in templates.items():
        d = copy(src, out, "template-" + name)
        with open(os.path.join(d, "chat_template.jinja"), "wb") as f:
            f.write(body)


if __name__ == "__main__":
    main()
