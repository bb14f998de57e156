package dev.edgelm.template;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Template errors reach the user as one clear line naming the template and line. */
class ChatTemplateErrorsTest {

    @Test
    void syntaxErrorsNameTheLine() {
        ChatTemplateException e = assertThrows(ChatTemplateException.class,
                () -> ChatTemplate.parse("line one\n{% if messages %}\n{{ x }}\n", "t.jinja", Map.of()));
        assertEquals("chat template t.jinja line 3: unexpected end of template: missing '{% elif %}' or '{% else %}' or '{% endif %}'",
                e.getMessage());
        ChatTemplateException e2 = assertThrows(ChatTemplateException.class,
                () -> ChatTemplate.parse("{% include 'other.jinja' %}", "t.jinja", Map.of()));
        assertEquals("syntax error: 'include' tags are not supported (EdgeLM's Jinja engine has no include blocks)", e2.templateMessage());
    }

    @Test
    void raisedErrorsCarryTheTemplatesOwnText() {
        ChatTemplate t = ChatTemplate.parse("{% if messages|length > 1 %}\n{{ raise_exception('Only one message, please.') }}\n{% endif %}ok",
                "t.jinja", Map.of());
        assertEquals("ok", t.render(List.of(Map.of("role", "user", "content", "a")), null, false, Map.of()));
        ChatTemplateException e = assertThrows(ChatTemplateException.class,
                () -> t.render(List.of(Map.of("role", "user"), Map.of("role", "user")), null, false, Map.of()));
        assertEquals("Only one message, please.", e.templateMessage());
        assertEquals("chat template t.jinja line 2: Only one message, please.", e.getMessage());
    }

    @Test
    void anEmptyRaisedErrorStillSaysWhatHappened() {
        ChatTemplate t = ChatTemplate.parse("{{ raise_exception('') }}", "t.jinja", Map.of());
        ChatTemplateException e = assertThrows(ChatTemplateException.class, () -> t.render(List.of(), null, false, Map.of()));
        assertEquals("chat template t.jinja line 1: the template raised an error without a message", e.getMessage());
    }

    @Test
    void runawayRecursionIsAnErrorNotACrash() {
        ChatTemplate t = ChatTemplate.parse("{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}", "t.jinja", Map.of());
        ChatTemplateException e = assertThrows(ChatTemplateException.class, () -> t.render(List.of(), null, false, Map.of()));
        assertTrue(e.templateMessage().startsWith("maximum recursion depth exceeded"), e.templateMessage());
    }
}
