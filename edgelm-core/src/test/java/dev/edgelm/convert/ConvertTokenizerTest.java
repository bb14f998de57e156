package dev.edgelm.convert;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.edgelm.format.gguf.GenerationDefaults;
import dev.edgelm.format.gguf.GgufFile;
import dev.edgelm.format.gguf.GgufTokenizerData;
import dev.edgelm.format.npy.Npy;
import dev.edgelm.model.Logit;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A complete checkpoint (tiny-chat) becomes one self-contained GGUF: weights, tokenizer, template, stops. */
class ConvertTokenizerTest {
    static final Path TINY_CHAT = ConverterParityTest.FIXTURES.resolve("tiny-chat");

    @TempDir
    Path dir;

    @Test
    void tinyChatCarriesItsTokenizerTemplateStopsAndDefaults() throws Exception {
        List<String> warnings = new ArrayList<>();
        Path gguf = dir.resolve("chat.gguf");
        GgufConverter.Result r = GgufConverter.convert(TINY_CHAT, gguf, QuantRecipe.BF16, warnings::add, null);
        assertTrue(r.tokenizer());
        assertEquals(List.of(), warnings);
        try (GgufFile g = GgufFile.open(gguf)) {
            GgufTokenizerData t = GgufTokenizerData.read(g.metadata()).orElseThrow();
            // figures from the fixture's README: 8192 BPE tokens + 26 added tokens, embedding rows to 8320
            assertEquals("gpt2", t.model());
            assertEquals("qwen2", t.pre(), "the Qwen3 regex has no \\p{M}");
            assertEquals(8320, t.tokens().length);
            assertEquals(7936, t.merges().length);
            assertEquals("Ġ Ġ", t.merges()[0]);
            assertEquals("<|im_end|>", t.tokens()[8194]);
            assertEquals("<think>", t.tokens()[8216]);
            assertEquals(GgufTokenizerData.TYPE_CONTROL, t.tokenTypes()[8192]);
            assertEquals(GgufTokenizerData.TYPE_USER_DEFINED, t.tokenTypes()[8216], "<think> is not special");
            assertEquals(GgufTokenizerData.TYPE_NORMAL, t.tokenTypes()[100]);
            assertEquals(102, t.count(GgufTokenizerData.TYPE_UNUSED), "rows 8218..8319");
            assertEquals("[PAD8218]", t.tokens()[8218]);
            assertEquals(8194, t.eosId());
            assertEquals(8194, t.eotId());
            assertEquals(8192, t.padId());
            assertEquals(-1, t.bosId());
            assertFalse(t.addBos());
            assertEquals(Files.readString(TINY_CHAT.resolve("chat_template.jinja")), t.chatTemplate());
            GenerationDefaults gen = GenerationDefaults.read(g.metadata());
            assertEquals(Boolean.FALSE, gen.doSample());
            assertArrayEquals(new int[] {8194, 8192}, t.stopTokenIds(gen));
        }
        int[] ids = Npy.read(TINY_CHAT.resolve("golden/turn1_prompt_ids.npy")).toIntArray();
        Npy.Array golden = Npy.read(TINY_CHAT.resolve("golden/turn1_logits.npy"));
        float[] got = ConverterParityTest.logits(gguf, ids);
        float maxAbs = Logit.maxAbsDiff(golden.floats(), got);
        assertTrue(maxAbs <= 1e-3, "max abs " + maxAbs);
        assertEquals(ids.length, Logit.sameArgmax(golden.floats(), got, ids.length, golden.dim(1)));
    }

    @Test
    void theQwen35PreTokenizerIsRecognisedByItsCombiningMarks() throws Exception {
        ObjectMapper json = new ObjectMapper();
        String qwen35 = "{\"type\":\"Sequence\",\"pretokenizers\":[{\"type\":\"Split\",\"pattern\":{\"Regex\":"
                + "\"[^\\\\r\\\\n\\\\p{L}\\\\p{N}]?[\\\\p{L}\\\\p{M}]+|\\\\p{N}\"}}]}";
        String qwen2 = "{\"type\":\"Sequence\",\"pretokenizers\":[{\"type\":\"Split\",\"pattern\":{\"Regex\":"
                + "\"[^\\\\r\\\\n\\\\p{L}\\\\p{N}]?\\\\p{L}+|\\\\p{N}\"}}]}";
        assertEquals("qwen35", HfTokenizerFiles.preTokenizerName(json.readTree(qwen35)));
        assertEquals("qwen2", HfTokenizerFiles.preTokenizerName(json.readTree(qwen2)));
    }

    @Test
    void aFailureMidwayLeavesNoOutputAndNoTemporaryFile() throws Exception {
        Path out = dir.resolve("broken.gguf");
        RuntimeException boom = new RuntimeException("interrupted");
        RuntimeException thrown = assertThrows(RuntimeException.class, () -> GgufConverter.convert(
                ConverterParityTest.FIXTURES.resolve("tiny-a"), out, QuantRecipe.BF16, w -> { },
                (tensor, done, total) -> {
                    if (tensor.startsWith("blk.2.")) {
                        throw boom;
                    }
                }));
        assertEquals(boom, thrown);
        try (Stream<Path> files = Files.list(dir)) {
            assertEquals(List.of(), files.toList());
        }
    }
}
