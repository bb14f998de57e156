package dev.edgelm.engine;

import dev.edgelm.format.gguf.GenerationDefaults;
import dev.edgelm.format.gguf.GgufMetadata;
import java.nio.file.Path;

/**
 * A model's {@code generation_config.json} (in a GGUF file: its {@code edgelm.generation.*} keys): the
 * sampling settings its authors recommend and the token ids that end a turn. Every field is optional (null when absent); {@link #NONE} is the empty config.
 */
public record GenerationConfig(
        Boolean doSample,
        Double temperature,
        Integer topK,
        Double topP,
        Double minP,
        Double repetitionPenalty,
        Double presencePenalty,
        int[] eosTokenIds) {

    public static final GenerationConfig NONE = new GenerationConfig(null, null, null, null, null, null, null, new int[0]);

    /** Reads {@code folder/generation_config.json}, or returns {@link #NONE} when there is none. */
    public static GenerationConfig read(Path folder) {
        return from(GenerationDefaults.readFolder(folder));
    }

    /** The generation defaults in a GGUF header ({@link GenerationDefaults}), or {@link #NONE}. */
    public static GenerationConfig fromGguf(GgufMetadata metadata) {
        return from(GenerationDefaults.read(metadata));
    }

    private static GenerationConfig from(GenerationDefaults d) {
        return new GenerationConfig(d.doSample(), d.temperature(), d.topK(), d.topP(), d.minP(), d.repetitionPenalty(),
                d.presencePenalty(), d.eosTokenIds() == null ? new int[0] : d.eosTokenIds().clone());
    }
}
