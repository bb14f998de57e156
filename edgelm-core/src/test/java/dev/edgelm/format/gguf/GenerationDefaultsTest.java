package dev.edgelm.format.gguf;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.edgelm.Fixtures;
import dev.edgelm.convert.HfTokenizerFiles;
import dev.edgelm.engine.GenerationConfig;
import dev.edgelm.util.EdgeLmException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The one reader of {@code generation_config.json}, and that the engine and the converter both use it. */
class GenerationDefaultsTest {

    @TempDir
    Path folder;

    private Path write(String json) throws IOException {
        return Files.writeString(folder.resolve("generation_config.json"), json);
    }

    @Test
    void readsTheKnownFieldsIgnoresUnknownOnesAndLeavesMissingOrNullOnesNull() throws IOException {
        Path file = write("""
                {"do_sample": true, "temperature": 0.6, "top_k": 20, "top_p": null,
                 "eos_token_id": 7, "pad_token_id": 3, "transformers_version": "4.57.0", "nested": {"a": [1]}}
                """);
        GenerationDefaults d = GenerationDefaults.readJson(file);
        assertEquals(true, d.doSample());
        assertEquals(0.6, d.temperature());
        assertEquals(20, d.topK());
        assertNull(d.topP());
        assertNull(d.minP());
        assertNull(d.repetitionPenalty());
        assertNull(d.presencePenalty());
        assertArrayEquals(new int[] {7}, d.eosTokenIds());
    }

    @Test
    void readsACheckpointsFileWithAListOfEosIds() {
        // values as listed in the fixture README: do_sample false, eos_token_id [8194, 8192]
        GenerationDefaults d = GenerationDefaults.readFolder(Fixtures.path("qwen35/tiny-chat"));
        assertEquals(false, d.doSample());
        assertArrayEquals(new int[] {8194, 8192}, d.eosTokenIds());
        assertNull(d.temperature());
    }

    @Test
    void aFolderWithoutTheFileHasNoDefaults() {
        assertSame(GenerationDefaults.NONE, GenerationDefaults.readFolder(folder));
        assertEquals(0, GenerationConfig.read(folder).eosTokenIds().length);
    }

    @Test
    void malformedJsonIsRejectedNamingTheFileByTheEngineAndTheConverterAlike() throws IOException {
        Path file = write("{\"do_sample\": false, \"eos_token_id\": [1, 2\n");
        for (Runnable reader : new Runnable[] {
                () -> GenerationDefaults.readJson(file),
                () -> GenerationConfig.read(folder),
                () -> HfTokenizerFiles.generationDefaults(folder)}) {
            EdgeLmException e = assertThrows(EdgeLmException.class, reader::run);
            assertTrue(e.getMessage().startsWith(file + ": cannot read or parse"), e.getMessage());
        }
    }

    @Test
    void aFileThatIsNotAnObjectIsRejected() throws IOException {
        Path file = write("[1, 2]");
        EdgeLmException e = assertThrows(EdgeLmException.class, () -> GenerationDefaults.readJson(file));
        assertEquals(file + ": not a JSON object", e.getMessage());
    }

    @Test
    void aKnownFieldOfTheWrongTypeIsRejectedNamingFileAndField() throws IOException {
        String[][] cases = {
            {"{\"temperature\": \"0.7\"}", "field 'temperature' must be a number"},
            {"{\"do_sample\": 1}", "field 'do_sample' must be true or false"},
            {"{\"top_k\": 2.5}", "field 'top_k' must be an integer"},
            {"{\"eos_token_id\": [1, \"x\"]}", "field 'eos_token_id' must be a token id or a list of them"},
        };
        for (String[] c : cases) {
            Path file = write(c[0]);
            EdgeLmException e = assertThrows(EdgeLmException.class, () -> GenerationDefaults.readJson(file), c[0]);
            assertTrue(e.getMessage().startsWith(file + ": " + c[1]), e.getMessage());
        }
    }
}
