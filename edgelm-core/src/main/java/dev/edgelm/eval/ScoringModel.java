package dev.edgelm.eval;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.edgelm.format.gguf.GgufTokenizerData;
import dev.edgelm.model.ModelLoader;
import dev.edgelm.model.Qwen35Model;
import dev.edgelm.template.ChatFormat;
import dev.edgelm.tokenizer.Tokenizer;
import dev.edgelm.util.EdgeLmException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;

/**
 * A model opened for teacher-forced scoring: the forward pass, its tokenizer (if it has one) and whether the
 * vocabulary adds a BOS token in front of a text, as llama.cpp's {@code llama_vocab_get_add_bos} says.
 */
public record ScoringModel(Path path, Qwen35Model model, Optional<Tokenizer> tokenizer, boolean addBos, int bosId)
        implements AutoCloseable {

    public static ScoringModel open(Path path, int threads) {
        ModelLoader.Opened opened = ModelLoader.open(path, threads);
        try {
            Optional<Tokenizer> tokenizer = ChatFormat.loadIfPresent(path).map(ChatFormat::tokenizer);
            boolean addBos = false;
            int bos = -1;
            if (opened.ggufMetadata() != null) {
                Optional<GgufTokenizerData> data = GgufTokenizerData.read(opened.ggufMetadata());
                if (data.isPresent()) {
                    addBos = data.get().addBos();
                    bos = data.get().bosId();
                }
            } else {
                Path config = path.resolve("tokenizer_config.json");
                if (Files.isRegularFile(config) && tokenizer.isPresent()) {
                    JsonNode c = new ObjectMapper().readTree(config.toFile());
                    addBos = c.path("add_bos_token").asBoolean(false);
                    JsonNode b = c.path("bos_token");
                    String text = b.isObject() ? b.path("content").asText(null) : b.isTextual() ? b.asText() : null;
                    bos = text == null ? -1 : tokenizer.get().id(text).orElse(-1);
                }
            }
            if (addBos && bos < 0) {
                throw new EdgeLmException(path + ": the tokenizer adds a BOS token but names none");
            }
            return new ScoringModel(path, opened.model(), tokenizer, addBos, bos);
        } catch (IOException e) {
            opened.model().close();
            throw new EdgeLmException(path + ": cannot read tokenizer_config.json: " + e.getMessage());
        } catch (RuntimeException e) {
            opened.model().close();
            throw e;
        }
    }

    public int vocabSize() {
        return model.config().vocabSize();
    }

    /**
     * The tokens of a text as llama-perplexity reads {@code -f FILE}: one trailing newline dropped, special-token
     * strings left as plain text, BOS in front when the vocabulary adds one.
     */
    public int[] tokenizeText(String text, String where) {
        Tokenizer t = tokenizer.orElseThrow(() -> new EdgeLmException(path + ": this model has no tokenizer to read " + where));
        String s = text.endsWith("\n") ? text.substring(0, text.length() - 1) : text;
        int[] ids = t.encode(s, true);
        if (!addBos) {
            return ids;
        }
        int[] out = new int[ids.length + 1];
        out[0] = bosId;
        System.arraycopy(ids, 0, out, 1, ids.length);
        return out;
    }

    @Override
    public void close() {
        model.close();
    }
}
