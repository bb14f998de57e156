package dev.edgelm;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.edgelm.chat.ChatListener;
import dev.edgelm.chat.Conversation;
import dev.edgelm.chat.TinyChat;
import dev.edgelm.engine.Engine;
import dev.edgelm.engine.EngineOptions;
import dev.edgelm.template.ChatFormat;
import org.junit.jupiter.api.Test;

/** The README's "Use from Java" example, on tiny-chat instead of a download: it compiles and streams the golden reply. */
class UseFromJavaTest {
    @Test
    void theReadmeExampleRuns() {
        StringBuilder printed = new StringBuilder();
        try (Engine engine = Engine.open(TinyChat.DIR.toString(), EngineOptions.defaults().withThreads(1))) {
            Conversation chat = Conversation.start(engine, ChatFormat.load(engine.modelPath()));
            chat.setSystem(TinyChat.SYSTEM);
            chat.send(TinyChat.TURN1, engine.defaultGenerationOptions().maxNewTokens(256).build(), new ChatListener() {
                @Override
                public void onAnswer(String text) {
                    printed.append(text);
                }
            });
        }
        assertEquals(TinyChat.text("turn1_reply"), printed.toString());
    }
}
