#!/usr/bin/env python3
"""Expected renders for EdgeLM's template tests, by Python jinja2 set up as transformers' apply_chat_template.

Usage (from the repository root, with a Python that has jinja2): python3 tools/template-reference/render_reference.py
Reads the chat templates kept in src/test/resources and writes src/test/resources/templates/*-renders.json.
"""
import json
import os
from datetime import datetime

import jinja2
import jinja2.ext
from jinja2.exceptions import TemplateError
from jinja2.sandbox import ImmutableSandboxedEnvironment

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
RES = os.path.join(ROOT, "src", "test", "resources")


def environment():
    """The environment of transformers' _compile_jinja_template (less its generation-tracking extension)."""

    def raise_exception(message):
        raise TemplateError(message)

    def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
        return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)

    def strftime_now(fmt):
        return datetime.now().strftime(fmt)

    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=[jinja2.ext.loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = strftime_now
    return env


def special_tokens_map(config):
    """What transformers passes as **special_tokens_map: the special tokens that are set, as strings."""
    out = {}
    for key in ["bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token", "mask_token"]:
        value = config.get(key)
        if isinstance(value, dict):
            value = value.get("content")
        if value is not None:
            out[key] = value
    if config.get("additional_special_tokens"):
        out["additional_special_tokens"] = config["additional_special_tokens"]
    return out


SYSTEM = {"role": "system", "content": "You are a helpful assistant."}
USER = {"role": "user", "content": "What is the capital of France?"}
TOOLS = [
    {"type": "function", "function": {
        "name": "get_weather",
        "description": "Get the current weather in a city — in °C, with “quotes” and 天气.",
        "parameters": {"type": "object", "properties": {
            "city": {"type": "string", "description": "City name"},
            "days": {"type": "integer", "minimum": 1, "maximum": 7.5},
            "units": {"type": "string", "enum": ["metric", "imperial"]},
            "detailed": {"type": "boolean", "default": False},
            "extra": {"type": ["string", "null"], "default": None}},
            "required": ["city"]}}},
    {"type": "function", "function": {"name": "search", "description": "Search the web.\nLine two\ttabbed \\ backslash",
                                      "parameters": {"type": "object", "properties": {"q": {"type": "string"}}}}},
]
CALL = {"role": "assistant", "content": "", "tool_calls": [
    {"type": "function", "function": {"name": "get_weather", "arguments": {
        "city": "Paris", "days": 3, "detailed": True, "ratio": 0.5, "big": 1e20, "small": 1e-7, "none": None,
        "filters": ["a", 1, None], "nested": {"k": "v", "n": [1, 2]}, "text": "multi\nline \"quoted\" é"}}}]}
TOOL_RESULT = {"role": "tool", "content": "{\"temperature\": 21, \"sky\": \"clear\"}"}

CHAT_CASES = [
    ("system_user_generation_prompt", [SYSTEM, USER], None, True, {}),
    ("system_user_no_think", [SYSTEM, USER], None, True, {"enable_thinking": False}),
    ("system_user_think_true", [SYSTEM, USER], None, True, {"enable_thinking": True}),
    ("user_only_no_generation_prompt", [USER], None, False, {}),
    ("multi_turn_plain", [SYSTEM, USER, {"role": "assistant", "content": "  Paris.  "},
                          {"role": "user", "content": "And of Germany?"}], None, True, {"enable_thinking": False}),
    ("multi_turn_think_in_content", [USER,
                                     {"role": "assistant", "content": "<think>\nFrance... Paris.\n</think>\n\nParis."},
                                     {"role": "user", "content": "And Germany?"},
                                     {"role": "assistant", "content": "<think>\n\nGermany: Berlin.\n\n</think>\n\n\nBerlin."}],
     None, False, {}),
    ("multi_turn_reasoning_content", [USER, {"role": "assistant", "content": "Paris.", "reasoning_content": "\nEasy one.\n"},
                                      {"role": "user", "content": "And Italy?"},
                                      {"role": "assistant", "content": "\nRome.", "reasoning_content": "  Italy → Rome  "}],
     None, True, {}),
    ("empty_reasoning_last_turn", [USER, {"role": "assistant", "content": "Paris."}], None, False, {}),
    ("tools_with_system", [SYSTEM, {"role": "user", "content": "Weather in Paris?"}], TOOLS, True, {}),
    ("tools_without_system", [{"role": "user", "content": "Weather in Paris?"}], TOOLS, True, {"enable_thinking": False}),
    ("tool_call_round_trip", [SYSTEM, {"role": "user", "content": "Weather in Paris?"}, CALL, TOOL_RESULT], TOOLS, True, {}),
    ("tool_calls_with_content_and_two_results", [
        {"role": "user", "content": "Weather in Paris and Rome?"},
        {"role": "assistant", "content": "Let me check both.", "tool_calls": [
            {"function": {"name": "get_weather", "arguments": {"city": "Paris"}}},
            {"name": "get_weather", "arguments": {"city": "Rome", "days": 2}}]},
        {"role": "tool", "content": "sunny"}, {"role": "tool", "content": "rainy"},
        {"role": "assistant", "content": "Paris is sunny, Rome is rainy."},
        {"role": "user", "content": "Thanks!"}], TOOLS, True, {"enable_thinking": False}),
    ("multi_step_tools_generation", [
        {"role": "user", "content": "Plan a trip."}, CALL, TOOL_RESULT,
        {"role": "assistant", "content": "<think>\nNeed search too.\n</think>\n\n", "tool_calls": [
            {"function": {"name": "search", "arguments": {"q": "Paris museums"}}}]},
        {"role": "tool", "content": [{"type": "text", "text": "Louvre, Orsay"}]}], TOOLS, True, {}),
    ("tool_response_written_as_user", [
        {"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello!"},
        {"role": "user", "content": "<tool_response>\nx\n</tool_response>"}], None, True, {}),
    ("image_and_video_items", [
        {"role": "user", "content": [{"type": "image", "image": "file:///a.png"}, {"type": "text", "text": "Compare with"},
                                     {"type": "image_url", "image_url": {"url": "http://x/b.png"}},
                                     {"type": "video", "video": "v.mp4"}, {"type": "text", "text": " these."}]},
        {"role": "assistant", "content": [{"type": "text", "text": "They differ."}]},
        {"role": "user", "content": [{"type": "image"}, {"type": "text", "text": "And this?"}]}], None, True, {}),
    ("image_items_with_vision_ids", [
        {"role": "user", "content": [{"type": "image"}, {"type": "image"}, {"type": "video"}, {"type": "text", "text": "Describe."}]}],
     None, True, {"add_vision_id": True}),
    ("system_content_as_list", [{"role": "system", "content": [{"type": "text", "text": "Be brief."}]}, USER], None, True, {}),
    ("unicode_and_whitespace", [{"role": "system", "content": "\n  Système: 你好 👋\t\n"},
                                {"role": "user", "content": "  e\u0301 — “hi”\n\n"}], None, True, {}),
    ("assistant_content_none_with_tool_call", [
        {"role": "user", "content": "Search cats"},
        {"role": "assistant", "content": None, "tool_calls": [{"function": {"name": "search", "arguments": {"q": "cats"}}}]},
        {"role": "tool", "content": "many cats"}], TOOLS, True, {}),
    # errors the template raises
    ("error_no_messages", [], None, True, {}),
    ("error_no_user_query", [SYSTEM], None, True, {}),
    ("error_only_tool_responses", [{"role": "user", "content": "<tool_response>\nx\n</tool_response>"}], None, True, {}),
    ("error_system_not_first", [USER, SYSTEM], None, True, {}),
    ("error_image_in_system", [{"role": "system", "content": [{"type": "image"}]}, USER], None, True, {}),
    ("error_unexpected_role", [USER, {"role": "critic", "content": "hmm"}], None, True, {}),
    ("error_unexpected_item", [{"role": "user", "content": [{"type": "audio", "audio": "a.wav"}]}], None, True, {}),
]

QWEN3_CASES = [c for c in CHAT_CASES if not any(
    isinstance(m.get("content"), list) or m.get("content") is None for m in c[1])]

# Small templates that pin down Python/Jinja semantics one by one.
ENGINE_CASES = [
    ("numbers", "{{ 1 }} {{ 1.0 }} {{ 0.1 + 0.2 }} {{ 1e-5 }} {{ 1e16 }} {{ 123456789.125 }} {{ 7 // 2 }} {{ -7 // 2 }} "
                "{{ 7 / 2 }} {{ -7 % 3 }} {{ 2 ** 10 }} {{ 2 ** -1 }} {{ 10 / 5 }} {{ -0.0 }} {{ 3 * 1.5 }}", {}),
    ("none_bool_undefined", "[{{ none }}][{{ true }}][{{ False }}][{{ missing }}][{{ missing is defined }}][{{ none is none }}]", {}),
    ("reprs", "{{ [1, 'a', none, true, 1.5, \"it's\", 'say \"x\"', 'both \\' \"'] }} {{ {'k': [1, {'n': none}]} }} {{ (1, 2) }}", {}),
    ("strings", "{{ 'a,b,,c'.split(',') }} {{ ' x  y '.split() }} {{ 'a b c'.split(none, 1) }} {{ 'xxhixx'.strip('x') }} "
                "{{ '\\n\\nx\\n'.lstrip('\\n') }}|{{ 'ab'.rstrip('b') }} {{ 'Hello'.startswith('He') }} {{ 'Hello'.endswith(('x', 'lo')) }} "
                "{{ 'aXbX'.replace('X', '-') }} {{ 'hello world'.title() }} {{ 'ABC'.lower() }} {{ 'abc'.upper() }} "
                "{{ 'abcdef'[1:4] }} {{ 'abcdef'[::-1] }} {{ 'abcdef'[-2:] }} {{ 'héllo'[1] }} {{ '-'.join(['a', 'b']) }} "
                "{{ 'a-b-c'.rsplit('-', 1) }} {{ 'abc'.find('c') }} {{ '{} and {}'.format(1, 'x') }}", {}),
    ("lists", "{{ [1, 2, 3][::-1] }} {{ [1, 2, 3][1:] }} {{ [1, 2, 3][-1] }} {{ [1, 2] + [3] }} {{ [0] * 3 }} "
              "{{ [3, 1, 2]|sort }} {{ [3, 1, 2]|sort(reverse=true) }} {{ [1, 2, 2, 1]|unique|list }} {{ [1, 2, 3]|length }} "
              "{{ [1, 2, 3]|first }} {{ [1, 2, 3]|last }} {{ [1, 2, 3]|sum }} {{ [1, 5, 3]|max }} {{ [1, 2]|reverse|list }} "
              "{{ 2 in [1, 2] }} {{ 'b' in 'abc' }} {{ 'k' in {'k': 1} }} {{ 3 not in [1] }} {{ 1 < 2 < 3 }} {{ [1, 2] == [1, 2] }}", {}),
    ("dicts", "{% for k, v in d|items %}{{ k }}={{ v }};{% endfor %} {% for k, v in d.items() %}{{ k }}{% endfor %} "
              "{{ d.keys()|list }} {{ d.get('b') }} {{ d.get('z', 'dflt') }} {{ d['a'] }} {{ d.a }} {{ d|dictsort }} "
              "{{ d|tojson }} {{ d|tojson(indent=2) }} {{ d|tojson(sort_keys=true) }} {{ d|length }}",
     {"d": {"b": [1, 2.5, None, True], "a": "é\"\n\\\u2028\u0001"}}),
    ("filters", "{{ '  x  '|trim }}|{{ '\u00a0x\u3000'|trim }}|{{ 'x'|default('d') }} {{ missing|default('d') }} {{ ''|default('d', true) }} "
                "{{ [{'n': 'a'}, {'n': 'b'}]|map(attribute='n')|join(',') }} "
                "{{ [{'r': 'x', 'v': 1}, {'r': 'y', 'v': 2}]|selectattr('r', 'equalto', 'y')|list }} "
                "{{ [1, 2, 3, 4]|select('even')|list }} {{ [1, 2, 3, 4]|reject('odd')|list }} "
                "{{ 'ab'|upper }} {{ 3.7|int }} {{ '42'|int + 1 }} {{ 3|float }} {{ -3|abs }} {{ 2.567|round(2) }} "
                "{{ 'a\\nb'|indent(2) }} {{ 'a\\nb'|indent(2, true) }} {{ 'x y z'|wordcount }} {{ '<a>'|e }} "
                "{{ 5|string + 'x' }} {{ true|string }} {{ none|string }} {{ [1]|string }} {{ 'x'|tojson }} {{ 1.0|tojson }}", {}),
    ("tests", "{{ 'x' is string }} {{ 1 is number }} {{ true is number }} {{ 1 is integer }} {{ true is integer }} "
              "{{ 1.0 is float }} {{ {} is mapping }} {{ [] is sequence }} {{ 'x' is sequence }} {{ {} is iterable }} "
              "{{ 1 is iterable }} {{ missing is iterable }} {{ none is string }} {{ false is false }} {{ 0 is false }} "
              "{{ 4 is divisibleby 2 }} {{ 3 is odd }} {{ 'ab' is lower }} {{ 2 is in [1, 2] }} {{ x is sameas none }} "
              "{{ 1 is eq 1 }} {{ 'a' is not mapping }} {{ range is callable }}", {"x": None}),
    ("whitespace_control", "a  {{- ' b ' -}}  c\n  {% if true %}\n    d\n  {% endif %}\n  e {# comment #}\n  {#- c2 -#}  f\n"
                           "{%+ if true %}g{% endif +%}\nh\n   {{ 'i' }}   \n{% for x in [1, 2] -%}\n  {{ x }}\n{%- endfor %}\nend\n\n", {}),
    ("loops", "{% for x in [1, 2, 3, 4] %}{% if x == 2 %}{% continue %}{% endif %}{% if x == 4 %}{% break %}{% endif %}"
              "{{ loop.index }}/{{ loop.index0 }}/{{ loop.revindex }}/{{ loop.first }}/{{ loop.last }}/{{ loop.length }}/"
              "{{ loop.previtem }}/{{ loop.nextitem }}/{{ loop.cycle('a', 'b') }};{% endfor %}"
              "{% for x in [] %}no{% else %}empty{% endfor %} {% for x in [1, 2, 3, 4] if x is even %}{{ x }}{{ loop.length }}{% endfor %} "
              "{% for a, b in [[1, 2], [3, 4]] %}{{ a + b }}{% endfor %} {% for c in 'hé' %}[{{ c }}]{% endfor %} "
              "{% for k in {'x': 1, 'y': 2} %}{{ k }}{% endfor %}", {}),
    ("scopes", "{% set x = 1 %}{% for i in [1, 2] %}{% set x = x + i %}{{ x }}{% endfor %}{{ x }} "
               "{% set ns = namespace(total=0, items=[]) %}{% for i in [1, 2, 3] %}{% set ns.total = ns.total + i %}{% endfor %}{{ ns.total }} "
               "{% if true %}{% set y = 'in-if' %}{% endif %}{{ y }} {% set a, b = [1, 'two'] %}{{ b }}{{ a }} "
               "{% set block %}captured {{ 1 + 1 }}{% endset %}[{{ block }}] {% set d = dict(k=1, j='x') %}{{ d }} "
               "{{ range(3)|list }} {{ range(1, 10, 3)|list }} {% set n2 = namespace({'a': 1}, b=2) %}{{ n2.a }}{{ n2.b }}", {}),
    ("macros", "{% macro greet(name, punct='!', upper=false) %}{% if upper %}{{ name|upper }}{% else %}{{ name }}{% endif %}{{ punct }}{% endmacro %}"
               "{{ greet('ann') }} {{ greet('bob', '?') }} {{ greet('cy', upper=true) }} [{{ greet('dee')|trim }}] "
               "{% macro outer() %}<{{ caller_free }}>{% endmacro %}{% set caller_free = 'late' %}{{ outer() }} {{ greet('x') + '!' }}", {}),
    ("conditionals", "{{ 'y' if true else 'n' }} {{ 'y' if false else 'n' }} [{{ 'y' if false }}] {{ 1 and 2 }} {{ 0 or 'x' }} "
                     "{{ none or [] }} {{ not 1 }} {{ (1 if false else 2) + 1 }} {{ 1 + 2 * 3 - 4 / 2 }} {{ 'a' ~ 1 ~ none ~ missing }} "
                     "{{ -2 ** 2 }} {{ messages|length - 1 }}", {"messages": [1, 2, 3]}),
    ("raw_and_escapes", "{% raw %}{{ not rendered }}{% endraw %} {{ '\\t|\\x41|\\u00e9|\\\\|\\'' }} {{ \"dq \\\"x\\\"\" }}", {}),
    ("raise_in_macro", "{% macro check(v) %}{% if v > 1 %}{{ raise_exception('Too big: ' ~ v) }}{% endif %}ok{% endmacro %}"
                       "{{ check(1) }}{{ check(2) }}", {}),
    ("error_undefined_attribute", "{{ missing.attr }}", {}),
    ("error_list_append_unsafe", "{% set l = [] %}{{ l.append(1) }}", {}),
    ("error_add_str_int", "{{ 'a' + 1 }}", {}),
]


def render(env, source, variables):
    try:
        return {"expected": env.from_string(source).render(**variables)}
    except TemplateError as e:
        return {"error": str(e), "error_type": type(e).__name__}
    except Exception as e:  # noqa: BLE001 - the type and text are what the test compares
        return {"error": str(e), "error_type": type(e).__name__}


def write(name, payload):
    path = os.path.join(RES, "templates", name)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    lines = ",\n".join("  " + json.dumps(c, ensure_ascii=False) for c in payload["cases"])
    header = json.dumps({k: v for k, v in payload.items() if k != "cases"}, ensure_ascii=False, indent=1)[:-2]
    with open(path + ".tmp", "w", encoding="utf-8") as f:
        f.write(header + ',\n "cases": [\n' + lines + "\n ]\n}\n")
    os.replace(path + ".tmp", path)
    print(f"{path}: {len(payload['cases'])} cases")


def chat_renders(template_path, config_path, cases):
    with open(template_path, encoding="utf-8") as f:
        template = f.read()
    with open(config_path, encoding="utf-8") as f:
        config = json.load(f)
    env = environment()
    out = []
    for name, messages, tools, add_generation_prompt, kwargs in cases:
        variables = {"messages": messages, "tools": tools, "documents": None,
                     "add_generation_prompt": add_generation_prompt, **special_tokens_map(config), **kwargs}
        out.append({"name": name, "messages": messages, "tools": tools, "add_generation_prompt": add_generation_prompt,
                    "kwargs": kwargs, **render(env, template, variables)})
    return out


def main():
    generator = f"tools/template-reference/render_reference.py (Python jinja2 {jinja2.__version__})"
    setup = ("ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=[loopcontrols]), "
             "tojson = json.dumps(ensure_ascii=False, indent, separators, sort_keys), raise_exception, strftime_now; "
             "render(messages, tools, documents=None, add_generation_prompt, **special_tokens_map, **kwargs)")
    tiny = os.path.join(RES, "fixtures", "qwen35", "tiny-chat")
    write("qwen35-renders.json", {"generator": generator, "environment": setup,
                                  "template": "fixtures/qwen35/tiny-chat/chat_template.jinja",
                                  "cases": chat_renders(os.path.join(tiny, "chat_template.jinja"),
                                                        os.path.join(tiny, "tokenizer_config.json"), CHAT_CASES)})
    qwen3_config = os.path.join(RES, "tokenizers", "qwen3", "tokenizer_config.json")
    with open(qwen3_config, encoding="utf-8") as f:
        qwen3_template = json.load(f)["chat_template"]
    tmp = os.path.join(RES, "templates", ".qwen3-template.tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(qwen3_template)
    try:
        cases = chat_renders(tmp, qwen3_config, QWEN3_CASES)
    finally:
        os.remove(tmp)
    write("qwen3-renders.json", {"generator": generator, "environment": setup,
                                 "template": "tokenizers/qwen3/tokenizer_config.json chat_template", "cases": cases})
    env = environment()
    engine = [{"name": n, "template": s, "variables": v, **render(env, s, v)} for n, s, v in ENGINE_CASES]
    write("engine-renders.json", {"generator": generator, "environment": setup, "cases": engine})


if __name__ == "__main__":
    main()
