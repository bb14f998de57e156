package dev.edgelm.cli;

import dev.edgelm.hub.ModelResolver;
import picocli.CommandLine.Option;

/** The options of every command that takes a MODEL: how a Hub model is found ({@link ModelResolver}). */
final class ModelSource {
    /** Help text of a MODEL parameter: every form it accepts. */
    static final String MODEL_HELP = "The model: " + ModelResolver.MODEL_FORMS + ".";

    @Option(names = "--offline", description = "Never touch the network: local files and the cache only (also "
            + "HF_HUB_OFFLINE=1).")
    boolean offline;

    @Option(names = "--quant", paramLabel = "Q", description = "For a Hub model: the converted file to use, int8, int4 "
            + "or bf16 (converted once if missing). Default: int8, or the one 'edgelm pull' made.")
    String quant;

    @Option(names = "--keep-checkpoint", description = "For a Hub model: keep the downloaded safetensors after the "
            + "conversion (default: delete them, the GGUF file holds everything).")
    boolean keepCheckpoint;

    ModelResolver.Options options(ProcessContext context) {
        return ModelResolver.Options.defaults().withEnv(context.env()).withOffline(offline).withQuant(quant)
                .withKeepCheckpoint(keepCheckpoint).withProgress(System.err);
    }

    ModelResolver.Resolved resolve(String name, ProcessContext context) {
        return ModelResolver.resolve(name, options(context));
    }
}
