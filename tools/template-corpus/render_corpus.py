#!/usr/bin/env python3
"""Expected renders of a corpus of real chat templates, by Python jinja2 set up as transformers does it.

Usage (from the repository root, with a Python that has jinja2, e.g. Debian's python3-jinja2):
    python3 tools/template-corpus/render_corpus.py
Reads every src/test/resources/templates/corpus/*.jinja and writes
src/test/resources/templates/corpus-renders.json: for each template and each conversation below, the text
jinja2 renders or the error it raises. The environment is the one of tools/template-reference/render_reference.py
(transformers' apply_chat_template) plus transformers' {% generation %} tag, with strftime_now fixed to one instant so the expected text does not
depend on the day it is generated (the Java test fixes the same instant).
"""
import importlib.util
import json
import os
from datetime import datetime

from jinja2 import nodes
from jinja2.ext import Extension

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
CORPUS = os.path.join(ROOT, "src", "test", "resources", "templates", "corpus")
OUT = os.path.join(ROOT, "src", "test", "resources", "templates", "corpus-renders.json")

spec = importlib.util.spec_from_file_location(
    "render_reference", os.path.join(ROOT, "tools", "template-reference", "render_reference.py"))
ref = importlib.util.module_from_spec(spec)
spec.loader.exec_module(ref)

NOW = datetime(2026, 1, 15, 9, 5, 7)

SPECIAL = {"bos_token": "<s>", "eos_token": "</s>", "unk_token": "<unk>", "pad_token": "<pad>"}

SYSTEM = ref.SYSTEM
USER = ref.USER
TOOLS = ref.TOOLS
# the reference tool call, with the id (nine letters and digits, as Mistral's templates demand) and the tool
# result's name and tool_call_id that OpenAI-style clients send
CALL = json.loads(json.dumps(ref.CALL))
CALL["tool_calls"][0]["id"] = "call7Xy9Z"
TOOL_RESULT = dict(ref.TOOL_RESULT, tool_call_id="call7Xy9Z", name="get_weather")


class Generation(Extension):
    """transformers' {% generation %} block (AssistantTracker) when no assistant mask is asked for: the body
    rendered as the caller of a call block, i.e. in a scope of its own."""
    tags = {"generation"}

    def parse(self, parser):
        lineno = next(parser.stream).lineno
        body = parser.parse_statements(("name:endgeneration",), drop_needle=True)
        return nodes.CallBlock(self.call_method("_generation_support"), [], [], body).set_lineno(lineno)

    def _generation_support(self, caller):
        return caller()

CONVERSATIONS = [
    ("system_user", [SYSTEM, USER], None, True, {}),
    ("user_only_no_generation_prompt", [USER], None, False, {}),
    ("multi_turn", [SYSTEM, USER, {"role": "assistant", "content": "Paris."},
                    {"role": "user", "content": "And of Germany?"}], None, True, {}),
    ("thinking", [USER, {"role": "assistant", "content": "Paris.", "reasoning_content": "Easy: the capital is Paris."},
                  {"role": "user", "content": "And Italy?"}], None, True, {"enable_thinking": True}),
    ("no_thinking", [SYSTEM, USER], None, True, {"enable_thinking": False}),
    ("tools", [SYSTEM, {"role": "user", "content": "Weather in Paris?"}], TOOLS, True, {}),
    ("tool_call_round_trip", [SYSTEM, {"role": "user", "content": "Weather in Paris?"}, CALL, TOOL_RESULT,
                              {"role": "assistant", "content": "It is 21 °C and clear."},
                              {"role": "user", "content": "Thanks!"}], TOOLS, True, {}),
]


def main():
    env = ref.environment()
    env.add_extension(Generation)
    env.globals["strftime_now"] = lambda fmt: NOW.strftime(fmt)
    templates = []
    for name in sorted(os.listdir(CORPUS)):
        if not name.endswith(".jinja"):
            continue
        with open(os.path.join(CORPUS, name), encoding="utf-8") as f:
            source = f.read()
        entry = {"template": name, "cases": []}
        try:
            template = env.from_string(source)
        except Exception as e:  # a template jinja2 itself cannot parse
            entry["parse_error"] = "%s: %s" % (type(e).__name__, e)
            templates.append(entry)
            continue
        for case, messages, tools, gen, kwargs in CONVERSATIONS:
            c = {"name": case}
            try:
                c["expected"] = template.render(messages=messages, tools=tools, documents=None,
                                                add_generation_prompt=gen, **SPECIAL, **kwargs)
            except Exception as e:
                c["error"] = "%s: %s" % (type(e).__name__, e)
            entry["cases"].append(c)
        templates.append(entry)
    import jinja2
    doc = {
        "generator": "tools/template-corpus/render_corpus.py (Python jinja2 %s)" % jinja2.__version__,
        "environment": "as tools/template-reference/render_reference.py; strftime_now at %s" % NOW.isoformat(),
        "special_tokens": SPECIAL,
        "conversations": [{"name": n, "messages": m, "tools": t, "add_generation_prompt": g, "kwargs": k}
                          for n, m, t, g, k in CONVERSATIONS],
        "templates": templates,
    }
    with open(OUT, "w", encoding="utf-8") as f:
        json.dump(doc, f, ensure_ascii=False, indent=1)
        f.write("\n")
    n = sum(len(t["cases"]) for t in templates)
    errors = sum(1 for t in templates for c in t["cases"] if "error" in c)
    print("%d templates, %d renders, %d of them errors the template raised" % (len(templates), n, errors))


if __name__ == "__main__":
    main()
