#!/usr/bin/env python3
"""Writes the seed corpora of BinaryFormatsFuzzTest (GGUF, safetensors, sharded index, npy).

Every seed is a few KB: one tiny but complete Qwen3.5 GGUF (two layers, a 258-token byte-level vocabulary, a
ChatML template) that the loader accepts, and variants of it and of small safetensors / npy files that carry
the bug classes llama.cpp's GGUF tests and advisories name (tests/test-gguf.cpp: bad magic, versions, counts,
key sizes, types, duplicates, alignment, tensor names, dims, shapes, overflowing sizes, offsets, short data;
advisories: lying string and array lengths, tensor-size overflow, huge block_count, wrong array element types,
out-of-range token ids, tensors past the end of the file).

Run from the repository root: python3 tools/fuzz/make_binary_seeds.py
Only the Python standard library is used; the output is deterministic.
"""
import json
import os
import struct

ROOT = os.path.join("src", "test", "resources", "dev", "edgelm", "fuzz", "BinaryFormatsFuzzTestInputs")

# GGUF value types
U8, I8, U16, I16, U32, I32, F32, BOOL, STR, ARR, U64, I64, F64 = range(13)
SCALAR = {U8: "<B", I8: "<b", U16: "<H", I16: "<h", U32: "<I", I32: "<i", F32: "<f", BOOL: "<?",
          U64: "<Q", I64: "<q", F64: "<d"}
GGML_F32, GGML_F16, GGML_Q8_0, GGML_BF16 = 0, 1, 8, 30


def gstr(s):
    b = s.encode("utf-8") if isinstance(s, str) else s
    return struct.pack("<Q", len(b)) + b


def gvalue(t, v):
    if t == STR:
        return gstr(v)
    if t == ARR:
        et, items = v
        out = struct.pack("<IQ", et, len(items))
        for x in items:
            out += gvalue(et, x)
        return out
    return struct.pack(SCALAR[t], v)


def byte_tokens():
    """GPT-2's byte-to-unicode table: the 256 byte tokens of a byte-level BPE vocabulary."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    table = dict(zip(bs, cs))
    return [chr(table[b]) for b in range(256)]


TEMPLATE = ("{%- for m in messages %}{{- '<|im_start|>' + m.role + '\\n' + m.content + '<|im_end|>\\n' }}{%- endfor %}"
            "{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{%- endif %}")

H, FF, HEADS, KV, HD, ROPE = 4, 8, 2, 1, 4, 2
KH, VH, KD, INNER, CONV = 1, 2, 4, 8, 2
CONV_DIM = 2 * KH * KD + INNER


def tiny_metadata():
    tokens = byte_tokens() + ["Ġt", "he", "<|im_start|>", "<|im_end|>"]
    types = [1] * 258 + [3, 3]
    return [
        ("general.architecture", STR, "qwen35"),
        ("general.alignment", U32, 32),
        ("qwen35.block_count", U32, 2),
        ("qwen35.context_length", U32, 256),
        ("qwen35.embedding_length", U32, H),
        ("qwen35.feed_forward_length", U32, FF),
        ("qwen35.attention.head_count", U32, HEADS),
        ("qwen35.attention.head_count_kv", U32, KV),
        ("qwen35.rope.dimension_sections", ARR, (I32, [1, 0, 0, 0])),
        ("qwen35.rope.freq_base", F32, 10000000.0),
        ("qwen35.attention.layer_norm_rms_epsilon", F32, 1e-6),
        ("qwen35.attention.key_length", U32, HD),
        ("qwen35.attention.value_length", U32, HD),
        ("qwen35.ssm.conv_kernel", U32, CONV),
        ("qwen35.ssm.state_size", U32, KD),
        ("qwen35.ssm.group_count", U32, KH),
        ("qwen35.ssm.time_step_rank", U32, VH),
        ("qwen35.ssm.inner_size", U32, INNER),
        ("qwen35.full_attention_interval", U32, 2),
        ("qwen35.rope.dimension_count", U32, ROPE),
        ("tokenizer.ggml.model", STR, "gpt2"),
        ("tokenizer.ggml.pre", STR, "qwen35"),
        ("tokenizer.ggml.tokens", ARR, (STR, tokens)),
        ("tokenizer.ggml.token_type", ARR, (I32, types)),
        ("tokenizer.ggml.merges", ARR, (STR, ["Ġ t", "h e"])),
        ("tokenizer.ggml.eos_token_id", U32, 259),
        ("tokenizer.ggml.padding_token_id", U32, 259),
        ("tokenizer.chat_template", STR, TEMPLATE),
    ]


def tiny_tensors():
    """(name, ggml dims, type) of a two-layer model: layer 0 Gated DeltaNet, layer 1 gated attention."""
    t = [("token_embd.weight", [H, 260], GGML_BF16), ("output_norm.weight", [H], GGML_F32)]
    ffn = [("ffn_gate.weight", [H, FF]), ("ffn_up.weight", [H, FF]), ("ffn_down.weight", [FF, H]),
           ("attn_norm.weight", [H]), ("post_attention_norm.weight", [H])]
    lin = [("attn_qkv.weight", [H, CONV_DIM]), ("attn_gate.weight", [H, INNER]), ("ssm_beta.weight", [H, VH]),
           ("ssm_alpha.weight", [H, VH]), ("ssm_conv1d.weight", [CONV, CONV_DIM]), ("ssm_a", [VH]),
           ("ssm_dt.bias", [VH]), ("ssm_norm.weight", [INNER // VH]), ("ssm_out.weight", [INNER, H])]
    full = [("attn_q.weight", [H, 2 * HEADS * HD]), ("attn_k.weight", [H, KV * HD]), ("attn_v.weight", [H, KV * HD]),
            ("attn_q_norm.weight", [HD]), ("attn_k_norm.weight", [HD]), ("attn_output.weight", [HEADS * HD, H])]
    for i, layer in enumerate([lin, full]):
        for name, dims in ffn + layer:
            t.append(("blk.%d.%s" % (i, name), dims, GGML_F16 if name == "ffn_up.weight" else GGML_F32))
    return t


ELEMENT_BYTES = {GGML_F32: 4, GGML_F16: 2, GGML_BF16: 2}


def nbytes(dims, typ):
    n = 1
    for d in dims:
        n *= d
    if typ == GGML_Q8_0:
        return n // 32 * 34
    return n * ELEMENT_BYTES[typ]


def half(x):
    return struct.pack("<e", x)


def data_of(dims, typ, seed):
    n = nbytes(dims, typ) // (4 if typ == GGML_F32 else 2)
    vals = [((i * 37 + seed * 11) % 17 - 8) / 16.0 for i in range(n)]
    if typ == GGML_F32:
        return b"".join(struct.pack("<f", v) for v in vals)
    if typ == GGML_F16:
        return b"".join(half(v) for v in vals)
    return b"".join(struct.pack("<f", v)[2:] for v in vals)  # bf16: the high half of the f32


def pad(n, a):
    return (n + a - 1) // a * a


def gguf(kv=None, tensors=None, version=3, magic=b"GGUF", align=32, n_tensors=None, n_kv=None, raw_kv=b"",
         tensor_hook=None, data=True):
    kv = tiny_metadata() if kv is None else kv
    tensors = tiny_tensors() if tensors is None else tensors
    out = magic + struct.pack("<I", version)
    out += struct.pack("<QQ", len(tensors) if n_tensors is None else n_tensors, len(kv) if n_kv is None else n_kv)
    for k, t, v in kv:
        out += gstr(k) + struct.pack("<I", t) + gvalue(t, v)
    out += raw_kv
    blobs = []
    offset = 0
    for i, (name, dims, typ) in enumerate(tensors):
        info = gstr(name) + struct.pack("<I", len(dims)) + b"".join(struct.pack("<Q", d) for d in dims)
        info += struct.pack("<IQ", typ, offset)
        if tensor_hook:
            info = tensor_hook(i, info, name, dims, typ, offset)
        out += info
        try:
            blob = data_of(dims, typ, i)
        except (KeyError, OverflowError, MemoryError):
            blob = b""
        blobs.append(blob)
        offset = pad(offset + len(blob), align)
    if data:
        out += b"\0" * (pad(len(out), align) - len(out))
        for blob in blobs:
            out += blob + b"\0" * (pad(len(blob), align) - len(blob))
    return out


def replace_kv(key, t, v):
    return [(k, t, v) if k == key else (k, tt, vv) for k, tt, vv in tiny_metadata()]


def without_kv(key):
    return [e for e in tiny_metadata() if e[0] != key]


def write(target, name, data):
    d = os.path.join(ROOT, target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def gguf_seeds():
    good = gguf()
    seeds = {
        "tiny-qwen35": good,
        "bad-magic": gguf(magic=b"GGUG"),
        "bad-version-1": gguf(version=1),
        "bad-version-future": gguf(version=4),
        "big-endian-version": gguf(version=0x03000000),
        "empty": b"",
        "magic-only": b"GGUF",
        "header-only": good[:24],
        "n-tensors-huge": gguf(n_tensors=(1 << 63) - 1),
        "n-tensors-minus-one": gguf(n_tensors=(1 << 64) - 1),
        "n-kv-huge": gguf(n_kv=1 << 62),
        "n-kv-one-more": gguf(n_kv=len(tiny_metadata()) + 1),
        "bad-key-size": gguf(kv=[], n_kv=1, raw_kv=struct.pack("<Q", (1 << 64) - 2) + b"general"),
        "bad-value-type": gguf(kv=[], n_kv=1, raw_kv=gstr("general.architecture") + struct.pack("<I", 99) + gstr("x")),
        "duplicate-key": gguf(kv=tiny_metadata() + [("qwen35.block_count", U32, 2)]),
        "bad-align-zero": gguf(kv=replace_kv("general.alignment", U32, 0)),
        "bad-align-odd": gguf(kv=replace_kv("general.alignment", U32, 3)),
        "bad-align-huge": gguf(kv=replace_kv("general.alignment", U32, 1 << 31)),
        "bad-align-type": gguf(kv=replace_kv("general.alignment", F32, 32.0)),
        "string-length-huge": gguf(kv=[], n_kv=1, raw_kv=gstr("general.name") + struct.pack("<IQ", STR, 1 << 40) + b"abc"),
        "array-count-huge": gguf(kv=[], n_kv=1, raw_kv=gstr("t.arr") + struct.pack("<IIQ", ARR, U64, 1 << 61)),
        "array-of-arrays-deep": gguf(kv=[], n_kv=1, raw_kv=gstr("t.deep") + struct.pack("<IIQ", ARR, ARR, 1) * 64
                                     + struct.pack("<IQ", I32, 0)),
        "array-bad-element-type": gguf(kv=[], n_kv=1, raw_kv=gstr("t.arr") + struct.pack("<IIQ", ARR, 77, 3)),
        "block-count-1e9": gguf(kv=replace_kv("qwen35.block_count", U32, 1000000000)),
        "block-count-int-max": gguf(kv=replace_kv("qwen35.block_count", U32, 2147483647)),
        "block-count-u64": gguf(kv=replace_kv("qwen35.block_count", U64, 1 << 40)),
        "block-count-string": gguf(kv=replace_kv("qwen35.block_count", STR, "2")),
        "head-count-zero": gguf(kv=replace_kv("qwen35.attention.head_count", U32, 0)),
        "hidden-int-max": gguf(kv=replace_kv("qwen35.embedding_length", U32, 2147483647)),
        "eps-nan": gguf(kv=replace_kv("qwen35.attention.layer_norm_rms_epsilon", F32, float("nan"))),
        "freq-base-zero": gguf(kv=replace_kv("qwen35.rope.freq_base", F32, 0.0)),
        "rope-sections-huge": gguf(kv=replace_kv("qwen35.rope.dimension_sections", ARR, (I32, [1 << 30, 1 << 30, -5, 0]))),
        "token-type-as-f32": gguf(kv=replace_kv("tokenizer.ggml.token_type", ARR, (F32, [1.0] * 260))),
        "token-type-short": gguf(kv=replace_kv("tokenizer.ggml.token_type", ARR, (I32, [1] * 10))),
        "token-type-out-of-range": gguf(kv=replace_kv("tokenizer.ggml.token_type", ARR, (I32, [-1] + [1] * 259))),
        "tokens-as-ints": gguf(kv=replace_kv("tokenizer.ggml.tokens", ARR, (I32, list(range(260))))),
        "tokens-byte-hex-minus-one": gguf(kv=replace_kv("tokenizer.ggml.tokens", ARR, (STR, ["<0x-1>"] + byte_tokens()[1:] + ["Ġt", "he", "<|im_start|>", "<|im_end|>"]))),
        "scores-as-string": gguf(kv=tiny_metadata() + [("tokenizer.ggml.scores", ARR, (STR, ["x"] * 260))]),
        "merges-malformed": gguf(kv=replace_kv("tokenizer.ggml.merges", ARR, (STR, ["Ġt", "a b c", ""]))),
        "eos-out-of-vocab": gguf(kv=replace_kv("tokenizer.ggml.eos_token_id", U32, 4000000000)),
        "eos-negative": gguf(kv=replace_kv("tokenizer.ggml.eos_token_id", I32, -1)),
        "no-eos": gguf(kv=without_kv("tokenizer.ggml.eos_token_id")),
        "template-syntax-error": gguf(kv=replace_kv("tokenizer.chat_template", STR, "{% for m in messages %}{{ m.content }")),
        "template-huge-repeat": gguf(kv=replace_kv("tokenizer.chat_template", STR, "{{ 'a' * 2000000000 }}")),
        "template-bad-utf8": gguf(kv=replace_kv("tokenizer.chat_template", STR, b"{{ '\xff\xfe' }}")),
        "not-enough-data": good[:len(good) - 100],
        "duplicate-tensor": gguf(tensors=tiny_tensors() + [tiny_tensors()[1]]),
    }

    def hook(which, fn):
        def h(i, info, name, dims, typ, offset):
            return fn(info, name, dims, typ, offset) if i == which else info
        return h

    def info(name, dims, typ, offset, n_dims=None):
        return gstr(name) + struct.pack("<I", len(dims) if n_dims is None else n_dims) + \
            b"".join(struct.pack("<Q", d) for d in dims) + struct.pack("<IQ", typ, offset)

    seeds["bad-name-size"] = gguf(tensor_hook=hook(1, lambda i, n, d, t, o: struct.pack("<Q", 1 << 50) + i[8:]))
    seeds["bad-n-dims"] = gguf(tensor_hook=hook(1, lambda i, n, d, t, o: info(n, d + [1, 1, 1, 1], t, o)))
    seeds["zero-n-dims"] = gguf(tensor_hook=hook(1, lambda i, n, d, t, o: info(n, [], t, o)))
    seeds["bad-shape-zero"] = gguf(tensor_hook=hook(1, lambda i, n, d, t, o: info(n, [0], t, o)))
    seeds["bad-shape-negative"] = gguf(tensor_hook=hook(1, lambda i, n, d, t, o: info(n, [(1 << 64) - 4], t, o)))
    seeds["ne-too-big"] = gguf(tensor_hook=hook(0, lambda i, n, d, t, o: info(n, [1 << 32, 1 << 32], t, o)))
    seeds["ne-exabytes-quantized"] = gguf(tensor_hook=hook(0, lambda i, n, d, t, o: info(n, [1 << 40, 1 << 20], GGML_Q8_0, o)))
    seeds["quantized-row-not-block"] = gguf(tensor_hook=hook(0, lambda i, n, d, t, o: info(n, [33, 2], GGML_Q8_0, o)))
    seeds["bad-tensor-type"] = gguf(tensor_hook=hook(1, lambda i, n, d, t, o: info(n, d, 255, o)))
    seeds["bad-tensor-type-negative"] = gguf(tensor_hook=hook(1, lambda i, n, d, t, o: info(n, d, 0xFFFFFFFF, o)))
    seeds["bad-offset-unaligned"] = gguf(tensor_hook=hook(1, lambda i, n, d, t, o: info(n, d, t, o + 1)))
    seeds["bad-offset-past-end"] = gguf(tensor_hook=hook(2, lambda i, n, d, t, o: info(n, d, t, 1 << 40)))
    seeds["bad-offset-wraps"] = gguf(tensor_hook=hook(2, lambda i, n, d, t, o: info(n, d, t, (1 << 64) - 32)))
    seeds["overlapping-tensors"] = gguf(tensor_hook=hook(2, lambda i, n, d, t, o: info(n, d, t, 0)))
    seeds["embd-one-dim"] = gguf(tensor_hook=hook(0, lambda i, n, d, t, o: info(n, [H * 260], t, o)))
    seeds["embd-zero-rows"] = gguf(tensor_hook=hook(0, lambda i, n, d, t, o: info(n, [H, 0], t, o)))
    for name, data in seeds.items():
        write("ggufRead", name, data)
        if name.startswith(("tiny", "block", "head", "hidden", "eps", "freq", "rope", "token", "tokens", "scores",
                            "merges", "eos", "no-eos", "template", "embd", "duplicate-tensor", "ne-", "quantized")):
            write("ggufLoad", name, data)


def safetensors(header, data=b"", raw_len=None):
    h = json.dumps(header, separators=(",", ":")).encode() if not isinstance(header, bytes) else header
    h += b" " * (-len(h) % 8)
    return struct.pack("<Q", len(h) if raw_len is None else raw_len) + h + data


def st_seeds():
    f32 = struct.pack("<6f", 1, 2, 3, 4, 5, 6)
    bf16 = struct.pack("<4H", 0x3F80, 0x4000, 0xBF80, 0x7FC0)
    good_header = {"__metadata__": {"format": "pt"},
                   "a": {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 24]},
                   "b": {"dtype": "BF16", "shape": [4], "data_offsets": [24, 32]},
                   "c": {"dtype": "F16", "shape": [], "data_offsets": [32, 34]}}
    data = f32 + bf16 + struct.pack("<e", 1.5)
    seeds = {
        "good": safetensors(good_header, data),
        "empty-header": safetensors({}, b""),
        "short": b"\x08\x00\x00",
        "length-huge": safetensors(good_header, data, raw_len=(1 << 64) - 1),
        "length-past-end": safetensors(good_header, data, raw_len=10000),
        "not-json": safetensors(b"{not json", b""),
        "not-object": safetensors(b"[1,2,3]", b""),
        "deep-json": safetensors(b"[" * 5000 + b"]" * 5000, b""),
        "bad-dtype": safetensors({"a": {"dtype": "F99", "shape": [1], "data_offsets": [0, 4]}}, f32[:4]),
        "shape-negative": safetensors({"a": {"dtype": "F32", "shape": [-1, 2], "data_offsets": [0, 8]}}, f32[:8]),
        "shape-overflow": safetensors({"a": {"dtype": "F32", "shape": [1 << 62, 1 << 62], "data_offsets": [0, 8]}}, f32[:8]),
        "shape-not-ints": safetensors({"a": {"dtype": "F32", "shape": [1.5, "x"], "data_offsets": [0, 8]}}, f32[:8]),
        "offsets-reversed": safetensors({"a": {"dtype": "F32", "shape": [1], "data_offsets": [4, 0]}}, f32[:8]),
        "offsets-past-end": safetensors({"a": {"dtype": "F32", "shape": [1 << 20], "data_offsets": [0, 1 << 22]}}, f32),
        "offsets-huge": safetensors({"a": {"dtype": "F32", "shape": [1], "data_offsets": [(1 << 63) - 1, (1 << 63) + 3]}}, f32),
        "offsets-overlap": safetensors({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
                                        "b": {"dtype": "F32", "shape": [2], "data_offsets": [4, 12]}}, f32),
        "offsets-gap": safetensors({"a": {"dtype": "F32", "shape": [1], "data_offsets": [8, 12]}}, f32),
        "size-mismatch": safetensors({"a": {"dtype": "F32", "shape": [3], "data_offsets": [0, 8]}}, f32),
        "duplicate-key": safetensors(b'{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}', f32[:4]),
        "metadata-not-strings": safetensors({"__metadata__": {"x": [1, 2]}, "a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}}, f32[:4]),
        "tensor-not-object": safetensors({"a": 5}, b""),
    }
    for name, d in seeds.items():
        write("safetensorsHeader", name, d)
    # sharded: u16 length of the index, the index, then the shard
    shard = seeds["good"]

    def sharded(index):
        ib = index if isinstance(index, bytes) else json.dumps(index).encode()
        return struct.pack("<H", len(ib)) + ib + shard
    name = "model-00001-of-00001.safetensors"
    idx = {
        "good": sharded({"metadata": {"total_size": 34}, "weight_map": {"a": name, "b": name, "c": name}}),
        "missing-tensor": sharded({"weight_map": {"a": name, "zz": name}}),
        "other-shard": sharded({"weight_map": {"a": "model-00002-of-00002.safetensors"}}),
        "path-traversal": sharded({"weight_map": {"a": "../one/model.safetensors"}}),
        "absolute-path": sharded({"weight_map": {"a": "/etc/passwd"}}),
        "weight-map-not-object": sharded({"weight_map": [name]}),
        "entry-not-string": sharded({"weight_map": {"a": 7}}),
        "not-json": sharded(b"{\"weight_map\":"),
        "null": sharded(b"null"),
        "deep": sharded(b"{\"weight_map\":" + b"[" * 3000 + b"]" * 3000 + b"}"),
    }
    for n, d in idx.items():
        write("checkpointIndex", n, d)


def npy(header, data, version=1):
    h = header.encode("latin1")
    prefix = 10 if version == 1 else 12
    total = prefix + len(h) + 1
    h += b" " * (-total % 64) + b"\n"
    ln = struct.pack("<H", len(h)) if version == 1 else struct.pack("<I", len(h))
    return b"\x93NUMPY" + bytes([version, 0]) + ln + h + data


def npy_seeds():
    f = struct.pack("<6f", 1, 2, 3, 4, 5, 6)
    seeds = {
        "float32-2x3": npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", f),
        "int64-vector": npy("{'descr': '<i8', 'fortran_order': False, 'shape': (3,), }", struct.pack("<3q", 1, -2, 1 << 40)),
        "int32-vector": npy("{'descr': '<i4', 'fortran_order': False, 'shape': (2,), }", struct.pack("<2i", 7, -7)),
        "scalar": npy("{'descr': '<f4', 'fortran_order': False, 'shape': (), }", f[:4]),
        "version-2": npy("{'descr': '<f4', 'fortran_order': False, 'shape': (6,), }", f, version=2),
        "version-3": npy("{'descr': '<f4', 'fortran_order': False, 'shape': (6,), }", f, version=3),
        "fortran": npy("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }", f),
        "big-endian": npy("{'descr': '>f4', 'fortran_order': False, 'shape': (6,), }", f),
        "object-dtype": npy("{'descr': '|O', 'fortran_order': False, 'shape': (1,), }", b"\x80\x04N."),
        "shape-huge": npy("{'descr': '<f4', 'fortran_order': False, 'shape': (1000000000000,), }", f),
        "shape-overflow": npy("{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296, 4294967296), }", f),
        "shape-negative": npy("{'descr': '<f4', 'fortran_order': False, 'shape': (-1, 2), }", f),
        "data-short": npy("{'descr': '<f4', 'fortran_order': False, 'shape': (100,), }", f),
        "header-length-huge": b"\x93NUMPY\x02\x00\xff\xff\xff\x7f{'descr'",
        "header-garbage": npy("{'descr': '<f4', 'shape': (2, ", f),
        "int64-to-int-overflow": npy("{'descr': '<i8', 'fortran_order': False, 'shape': (1,), }", struct.pack("<q", 1 << 40)),
        "magic-only": b"\x93NUMPY",
    }
    for name, d in seeds.items():
        write("npy", name, d)


if __name__ == "__main__":
    gguf_seeds()
    st_seeds()
    npy_seeds()
