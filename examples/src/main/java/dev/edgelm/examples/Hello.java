package dev.edgelm.examples;

import dev.edgelm.chat.ChatListener;
import dev.edgelm.chat.Conversation;
import dev.edgelm.engine.Engine;
import dev.edgelm.engine.EngineOptions;
import dev.edgelm.template.ChatFormat;
import dev.edgelm.util.EdgeLmException;

/**
 * Loads a model, asks one question and prints the reply as it streams:
 * {@code Hello [MODEL [PROMPT]]}, MODEL a model folder or .gguf file (default: the tiny random test model, whose
 * reply is gibberish, but always the same gibberish).
 */
public final class Hello {
    public static void main(String[] args) {
        String model = args.length > 0 ? args[0] : "../src/test/resources/fixtures/qwen35/tiny-chat";
        String prompt = args.length > 1 ? args[1] : "What is the capital of France? Answer in one word.";
        try (Engine engine = Engine.open(model, EngineOptions.defaults())) {
            Conversation chat = Conversation.start(engine, ChatFormat.load(engine.modelPath()));
            chat.setSystem("You are a helpful assistant.");
            chat.send(prompt, engine.defaultGenerationOptions().maxNewTokens(256).build(), new ChatListener() {
                @Override
                public void onAnswer(String text) {
                    System.out.print(text);
                    System.out.flush();
                }
            });
            System.out.println();
        } catch (EdgeLmException e) {
            System.err.println("error: " + e.getMessage());
            System.exit(1);
        }
    }
}
