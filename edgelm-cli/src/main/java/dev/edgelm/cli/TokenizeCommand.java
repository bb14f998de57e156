package dev.edgelm.cli;

import dev.edgelm.tokenizer.Tokenizer;
import dev.edgelm.tokenizer.TokenizerJson;
import dev.edgelm.util.EdgeLmException;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.edgelm.hub.ModelResolver;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

/** Text to token ids and back with a model's tokenizer. */
@Command(name = "tokenize", mixinStandardHelpOptions = true, sortOptions = false,
        description = {"Print the token ids of a text (separated by spaces), or with --decode the text of token ids.",
                "Without --text, --file or --decode the text is read from standard input: echo hi | edgelm tokenize MODEL"})
final class TokenizeCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    @ParentCommand
    Main main;

    @Parameters(index = "0", paramLabel = "MODEL", description = "A tokenizer.json file, or " + ModelResolver.MODEL_FORMS + ".")
    String name;

    @ArgGroup(multiplicity = "0..1")
    Input input = new Input();

    static final class Input {
        @Option(names = "--text", paramLabel = "T", description = "The text to encode.")
        String text;

        @Option(names = "--file", paramLabel = "F", description = "Encode the contents of a UTF-8 file.")
        Path file;

        @Option(names = "--decode", paramLabel = "IDS", description = "Decode token ids: 1,2,3 or @file.")
        String decode;
    }

    @Option(names = "--split-special", description = "Take special-token strings in the text as plain text (default: they become their special tokens).")
    boolean splitSpecial;

    @Option(names = "--skip-special", description = "With --decode: leave special tokens out of the text.")
    boolean skipSpecial;

    @Option(names = "--count", description = "Print only the number of tokens.")
    boolean count;

    @Option(names = "--json", description = "Print one JSON object: the ids, each token's text (pieces) and the count.")
    boolean json;

    @Mixin
    ModelSource source;

    @Override
    public Integer call() {
        Tokenizer tokenizer = TokenizerJson.loadFrom(tokenizerPath());
        PrintWriter out = spec.commandLine().getOut();
        if (input.decode != null) {
            int[] ids = TokenIds.parse(input.decode, "--decode");
            String text = tokenizer.decode(ids, skipSpecial);
            if (json) {
                ObjectNode o = new ObjectMapper().createObjectNode();
                o.put("text", text);
                o.put("count", ids.length);
                out.println(o);
            } else {
                out.print(text);
            }
        } else {
            String text = input.text != null ? input.text : input.file != null ? readUtf8(input.file) : stdin();
            int[] ids = tokenizer.encode(text, splitSpecial);
            if (json) {
                ObjectNode o = new ObjectMapper().createObjectNode();
                ArrayNode idArray = o.putArray("ids");
                ArrayNode pieces = o.putArray("pieces");
                for (int id : ids) {
                    idArray.add(id);
                    pieces.add(tokenizer.decode(new int[] {id}, false));
                }
                o.put("count", ids.length);
                out.println(o);
            } else if (count) {
                out.println(ids.length);
            } else {
                out.println(TokenIds.join(ids));
            }
        }
        out.flush();
        return 0;
    }

    /** A tokenizer.json file as it is; any other name as every command resolves a model. */
    private Path tokenizerPath() {
        try {
            Path p = Path.of(name);
            if (Files.isRegularFile(p) && p.getFileName().toString().endsWith(".json")) {
                return p;
            }
        } catch (java.nio.file.InvalidPathException e) {
            // not a path: a Hub id
        }
        return source.resolve(name, main.context).path();
    }

    private String stdin() {
        byte[] bytes = main.context.readPiped(false).orElseThrow(() -> new EdgeLmException(
                "nothing to tokenize: give --text, --file or --decode, or pipe the text in"));
        try {
            return StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                    .decode(java.nio.ByteBuffer.wrap(bytes)).toString();
        } catch (CharacterCodingException e) {
            throw new EdgeLmException("standard input: not valid UTF-8 text");
        }
    }

    private static String readUtf8(Path file) {
        try {
            byte[] bytes = Files.readAllBytes(file);
            return StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                    .decode(java.nio.ByteBuffer.wrap(bytes)).toString();
        } catch (CharacterCodingException e) {
            throw new EdgeLmException(file + ": not valid UTF-8 text");
        } catch (IOException e) {
            throw new EdgeLmException(file + ": cannot read: " + e.getMessage());
        }
    }
}
