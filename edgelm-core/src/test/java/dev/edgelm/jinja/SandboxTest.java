package dev.edgelm.jinja;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Hostile templates end in a {@link TemplateException} naming the limit they crossed, before they allocate what
 * they ask for, loop for hours or overflow the stack; within the limits the engine still renders what Python's
 * jinja2 renders. Each case runs under the default limits unless it says otherwise.
 */
class SandboxTest {

    private static TemplateException refused(String source) {
        return assertThrows(TemplateException.class, () -> Template.parse(source).render(Map.of()));
    }

    private static void assertMentions(TemplateException e, String fragment) {
        assertTrue(e.getMessage().contains(fragment), () -> "message '" + e.getMessage() + "' lacks '" + fragment + "'");
    }

    @Test
    void aTwoBillionCharacterStringIsRefusedBeforeItIsBuilt() {
        TemplateException e = refused("{{ 'a' * 2000000000 }}");
        assertMentions(e, "2000000000 characters");
        assertEquals(1, e.line());
        assertMentions(refused("{{ 2000000000 * 'ab' }}"), "4000000000 characters");
        assertMentions(refused("{{ 'ab' * 9223372036854775807 }}"), "characters");
    }

    @Test
    void aBillionItemListIsRefusedBeforeItIsBuilt() {
        assertMentions(refused("{{ [0] * 1000000000 }}"), "1000000000 items");
        assertMentions(refused("{% for x in range(1000000000) %}{% endfor %}"), "range too big");
        assertMentions(refused("{{ ([1, 2] * 600000) | length }}"), "1200000 items");
    }

    @Test
    void aStringDoubledFortyTimesStopsAtTheLimit() {
        TemplateException e = refused("""
                {%- set ns = namespace(s='a') -%}
                {%- for i in range(40) %}{% set ns.s = ns.s ~ ns.s %}{% endfor -%}
                {{ ns.s | length }}""");
        assertMentions(e, "characters");
        // the same with + and with a filter that multiplies
        assertMentions(refused("{% set ns = namespace(s='ab') %}{% for i in range(40) %}{% set ns.s = ns.s + ns.s %}{% endfor %}"),
                "characters");
        assertMentions(refused("{% set ns = namespace(s='ab') %}{% for i in range(40) %}{% set ns.s = ns.s | replace('a', 'aa') %}{% endfor %}"),
                "characters");
        assertMentions(refused("{% set ns = namespace(s=[1]) %}{% for i in range(40) %}{% set ns.s = ns.s + ns.s %}{% endfor %}"),
                "items");
    }

    @Test
    void stringBuildingFiltersAreBounded() {
        assertMentions(refused("{{ 'x' | center(2000000000) }}"), "characters");
        assertMentions(refused("{{ 'a\\nb' | indent(2000000000) }}"), "characters");
        assertMentions(refused("{{ ('a' * 10000000) | replace('a', 'bbbbbbbbbb') }}"), "characters");
        assertMentions(refused("{{ (['a' * 10000000] * 10) | join(',') }}"), "characters");
        assertMentions(refused("{{ ['a' * 10000000, 'b' * 10000000] | tojson }}"), "characters");
        assertMentions(refused("{{ {'k': 'a' * 10000000, 'j': 'b' * 10000000} | tojson(indent=2) }}"), "characters");
        assertMentions(refused("{{ [1] | tojson(indent=2000000000) }}"), "characters");
        assertMentions(refused("{{ '%s%s' % ('a' * 10000000, 'b' * 10000000) }}"), "characters");
        assertMentions(refused("{{ '{}{}'.format('a' * 10000000, 'b' * 10000000) }}"), "characters");
        assertMentions(refused("{{ ','.join(['a' * 10000000] * 2) }}"), "characters");
    }

    @Test
    void anIntegerLiteralPastSixtyFourBitsIsUnsupportedNotACrash() {
        // found by fuzzing: a NumberFormatException escaped the parser
        TemplateException e = assertThrows(TemplateException.class, () -> Template.parse("{{ 99999999999999999999 }}"));
        assertMentions(e, "integer literal 99999999999999999999 is not supported");
        assertEquals("9223372036854775807", Template.parse("{{ 9223372036854775807 }}").render(Map.of()));
    }

    @Test
    void aRawBlockWithABraceTagIsNotACrash() {
        // found by fuzzing: "{%}" inside a raw block made the lexer cut a string backwards
        assertEquals("a{%}b", Template.parse("{% raw %}a{%}b{% endraw %}").render(Map.of()));
        assertThrows(TemplateException.class, () -> Template.parse("{% raw %}{%}"));
    }

    @Test
    void theOutputIsBounded() {
        // each piece is small; the text written is not
        TemplateException e = assertThrows(TemplateException.class, () -> Template.parse(
                "{% for i in range(100) %}{{ 'a' * 100000 }}{% endfor %}", Limits.DEFAULT.withMaxChars(1_000_000)).render(Map.of()));
        assertMentions(e, "output grew past 1000000 characters");
        assertMentions(assertThrows(TemplateException.class, () -> Template.parse(
                "{% for i in range(100) %}0123456789{% endfor %}", Limits.DEFAULT.withMaxChars(500)).render(Map.of())),
                "output grew past 500");
    }

    @Test
    void nestingTensOfThousandsDeepIsASyntaxLimitNotAStackOverflow() {
        int n = 30_000;
        assertMentions(refused("{{ " + "(".repeat(n) + "1" + ")".repeat(n) + " }}"), "nested deeper than 200 levels");
        assertMentions(refused("{{ " + "[".repeat(n) + "]".repeat(n) + " }}"), "nested deeper than 200 levels");
        assertMentions(refused("{{ " + "not ".repeat(n) + "x }}"), "nested deeper than 200 levels");
        assertMentions(refused("{{ " + "-".repeat(n) + "1 }}"), "nested deeper than 200 levels");
        assertMentions(refused("{{ f" + "(".repeat(n) + ")".repeat(n) + " }}"), "nested deeper than 200 levels");
        assertMentions(refused("{% if x %}".repeat(n) + "{% endif %}".repeat(n)), "nested deeper than 200 levels");
        assertMentions(refused("{% for x in y %}".repeat(n) + "{% endfor %}".repeat(n)), "nested deeper than 200 levels");
        assertMentions(refused("{{ {'a': ".repeat(n) + "1" + "}".repeat(n) + " }}"), "nested deeper than 200 levels");
    }

    @Test
    void longOperatorChainsAndRecursiveMacrosHitTheRecursionLimit() {
        // a flat chain parses without recursion but evaluates as a deep tree
        assertMentions(refused("{{ " + "1 + ".repeat(50_000) + "1 }}"), "recursed deeper than 1000 levels");
        assertMentions(refused("{{ 'a'" + " | trim".repeat(50_000) + " }}"), "recursed deeper than 1000 levels");
        assertMentions(refused("{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}"), "recursed deeper than 1000 levels");
        // after an error deep in the recursion the next render starts from depth zero
        Template t = Template.parse("{% macro f(n) %}{% if n > 0 %}{{ f(n - 1) }}{% endif %}.{% endmacro %}{{ f(depth) }}");
        assertThrows(TemplateException.class, () -> t.render(Map.of("depth", 100_000)));
        assertEquals(".".repeat(51), t.render(Map.of("depth", 50)));
    }

    @Test
    void twoNestedLoopsOfAHundredThousandRunOutOfSteps() {
        TemplateException e = refused("{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}");
        assertMentions(e, "more than 10000000 steps");
        assertMentions(assertThrows(TemplateException.class, () -> Template.parse(
                "{% for i in range(100000) %}{% for j in range(100000) %}{{ '' }}{% endfor %}{% endfor %}",
                Limits.DEFAULT.withMaxSteps(1_000_000)).render(Map.of())), "more than 1000000 steps");
        // charging produced values: a small loop that copies a big string every time runs out too
        assertMentions(assertThrows(TemplateException.class, () -> Template.parse(
                "{% set s = 'a' * 1000000 %}{% for i in range(100000) %}{% set t = s ~ '' %}{% endfor %}",
                Limits.DEFAULT.withMaxSteps(10_000_000)).render(Map.of())), "steps");
    }

    @Test
    void iteratingAHugeStringIsRefusedBeforeItsCharactersAreListed() {
        assertMentions(assertThrows(TemplateException.class, () -> Template.parse(
                "{% for c in s %}{% endfor %}", Limits.DEFAULT.withMaxItems(1000)).render(Map.of("s", "x".repeat(5000)))),
                "5000 items");
        // indexing and slicing a long string do not list its characters
        Template t = Template.parse("{{ s[0] }}{{ s[-1] }}{{ s[2:4] }}{{ s[::-1][:2] }}", Limits.DEFAULT.withMaxItems(10));
        assertEquals("aycdyx", t.render(Map.of("s", "abcd" + "x".repeat(100) + "y")));
        assertEquals("a😀c€", Template.parse("{{ s[0] }}{{ s[1] }}{{ s[2:4] }}").render(Map.of("s", "a😀c€")));
    }

    @Test
    void realTemplatesRenderWellInsideTheDefaults() {
        // a long conversation (2000 turns, 1 MB of text) through a ChatML template with a tool list
        String template = """
                {%- for m in messages %}{{ '<|im_start|>' + m.role + '\\n' + m.content | trim + '<|im_end|>\\n' }}{% endfor -%}
                {%- if tools %}{% for t in tools %}{{ t | tojson }}{% endfor %}{% endif -%}
                {%- if add_generation_prompt %}<|im_start|>assistant
                {% endif %}""";
        List<Map<String, Object>> messages = new java.util.ArrayList<>();
        for (int i = 0; i < 2000; i++) {
            messages.add(Map.of("role", i % 2 == 0 ? "user" : "assistant", "content", "word ".repeat(100)));
        }
        Map<String, Object> tool = new java.util.LinkedHashMap<>();
        tool.put("name", "f");
        tool.put("parameters", Map.of("type", "object"));
        String out = Template.parse(template).render(Map.of("messages", messages, "add_generation_prompt", true,
                "tools", List.of(tool)));
        StringBuilder expected = new StringBuilder();
        for (Map<String, Object> m : messages) {
            expected.append("<|im_start|>").append(m.get("role")).append('\n').append("word ".repeat(100).strip()).append("<|im_end|>\n");
        }
        expected.append("{\"name\": \"f\", \"parameters\": {\"type\": \"object\"}}<|im_start|>assistant\n");
        assertEquals(expected.toString(), out);
    }

    @Test
    void limitsComeFromSystemPropertiesWhenSet() {
        String key = Limits.PROPERTY_PREFIX + "maxSteps";
        try {
            System.setProperty(key, "1000");
            assertEquals(1000, Limits.fromSystemProperties().maxSteps());
            assertMentions(refused("{% for i in range(2000) %}{% endfor %}"), "more than 1000 steps");
            System.setProperty(key, "lots");
            TemplateException e = assertThrows(TemplateException.class, Limits::fromSystemProperties);
            assertMentions(e, "edgelm.template.maxSteps = 'lots'");
        } finally {
            System.clearProperty(key);
        }
        assertEquals(Limits.DEFAULT, Limits.fromSystemProperties());
        assertThrows(IllegalArgumentException.class, () -> Limits.DEFAULT.withMaxChars(0));
    }
}
