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
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

/** Text to token ids and back with a model's tokenizer. */
@Command(name = "tokenize", mixinStandardHelpOptions = true,
        description = "Print the token ids of a text (separated by spaces), or with --decode the text of token ids.")
final class TokenizeCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    @Parameters(index = "0", paramLabel = "MODEL_OR_TOKENIZER", description = "A tokenizer.json, a checkpoint folder holding one, or a .gguf file.")
    Path model;

    @ArgGroup(multiplicity = "1")
    Input input;

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

    @Override
    public Integer call() {
        Tokenizer tokenizer = TokenizerJson.loadFrom(model);
        PrintWriter out = spec.commandLine().getOut();
        if (input.decode != null) {
            int[] ids = TokenIds.parse(input.decode, "--decode");
            out.print(tokenizer.decode(ids, skipSpecial));
        } else {
            String text = input.text != null ? input.text : readUtf8(input.file);
            out.println(TokenIds.join(tokenizer.encode(text, splitSpecial)));
        }
        out.flush();
        return 0;
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
