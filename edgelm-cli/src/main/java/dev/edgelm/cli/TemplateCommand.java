package dev.edgelm.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.edgelm.template.ChatFormat;
import dev.edgelm.util.EdgeLmException;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

/** Renders a conversation with the model's own chat template. */
@Command(name = "template", mixinStandardHelpOptions = true, sortOptions = false,
        description = "Print the prompt the model's chat template makes of a conversation (ending with the opening of "
                + "the assistant's turn). Thinking is off by default, as in 'edgelm run'; --think turns it on.")
final class TemplateCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    @ParentCommand
    Main main;

    @Parameters(index = "0", paramLabel = "MODEL", description = ModelSource.MODEL_HELP)
    String name;

    @Mixin
    ModelSource source;

    @Option(names = "--messages", required = true, paramLabel = "FILE",
            description = "JSON conversation: a list of messages ({\"role\": ..., \"content\": ...}) or {\"messages\": [...]}.")
    Path messages;

    @Option(names = "--tools", paramLabel = "FILE", description = "JSON list of tool definitions.")
    Path tools;

    @Option(names = "--think", negatable = true, description = "Render with enable_thinking=true (--no-think, the "
            + "default as in 'edgelm run': false, which for Qwen3 / Qwen3.5 is an empty think block).")
    boolean think;

    @Option(names = "--no-generation-prompt", description = "Do not open an assistant turn at the end.")
    boolean noGenerationPrompt;

    @Option(names = "--ids", description = "Print the prompt's token ids instead of its text.")
    boolean ids;

    @Override
    public Integer call() {
        ChatFormat format = ChatFormat.load(source.resolve(name, main.context).path());
        JsonNode conversation = readJson(messages);
        if (conversation.isObject() && conversation.has("messages")) {
            conversation = conversation.get("messages");
        }
        if (!conversation.isArray()) {
            throw new EdgeLmException(messages + ": expected a JSON list of messages (or an object with \"messages\")");
        }
        List<JsonNode> toolList = null;
        if (tools != null) {
            JsonNode t = readJson(tools);
            if (!t.isArray()) {
                throw new EdgeLmException(tools + ": expected a JSON list of tool definitions");
            }
            toolList = list(t);
        }
        Map<String, Object> kwargs = new LinkedHashMap<>();
        kwargs.put("enable_thinking", think);
        String prompt = format.template().render(list(conversation), toolList, !noGenerationPrompt, kwargs);
        PrintWriter out = spec.commandLine().getOut();
        if (ids) {
            out.println(TokenIds.join(format.tokenizer().encode(prompt)));
        } else {
            out.print(prompt);
        }
        out.flush();
        return 0;
    }

    private static List<JsonNode> list(JsonNode array) {
        List<JsonNode> out = new ArrayList<>();
        array.forEach(out::add);
        return out;
    }

    private static JsonNode readJson(Path file) {
        try {
            return new ObjectMapper().readTree(file.toFile());
        } catch (IOException e) {
            throw new EdgeLmException(file + ": not readable JSON: " + e.getMessage());
        }
    }
}
