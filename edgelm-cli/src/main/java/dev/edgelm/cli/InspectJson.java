package dev.edgelm.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.edgelm.convert.HfTokenizerFiles;
import dev.edgelm.format.gguf.GenerationDefaults;
import dev.edgelm.format.gguf.GgufFile;
import dev.edgelm.format.gguf.GgufTensorInfo;
import dev.edgelm.format.gguf.GgufTokenizerData;
import dev.edgelm.format.safetensors.SafetensorsCheckpoint;
import dev.edgelm.hub.ModelResolver;
import dev.edgelm.model.GgufLoader;
import dev.edgelm.model.Qwen35Config;
import dev.edgelm.tensor.TensorView;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/** {@code edgelm inspect --json}: one object, the same facts as the text, sizes in bytes. */
final class InspectJson {
    private InspectJson() {}

    static String of(ModelResolver.Resolved r) {
        ObjectNode o = new ObjectMapper().createObjectNode();
        o.put("name", r.name());
        o.put("path", r.path().toString());
        o.put("format", r.format().name().toLowerCase(java.util.Locale.ROOT));
        o.put("quantisation", r.quant());
        o.put("file_bytes", r.bytes());
        if (r.repo() != null) {
            o.put("hub_repo", r.repo().toString());
        }
        o.put("context_length", ModelResolver.contextLength(r));
        Map<String, long[]> mix = new TreeMap<>(); // type -> {tensors, bytes}
        long params = 0;
        Qwen35Config c;
        Optional<GgufTokenizerData> tok;
        GenerationDefaults gen;
        if (r.format() == ModelResolver.Format.GGUF) {
            try (GgufFile g = GgufFile.open(r.path())) {
                o.put("architecture", g.metadata().requireString("general.architecture"));
                c = GgufLoader.config(g);
                for (GgufTensorInfo t : g.tensorInfos().values()) {
                    long[] m = mix.computeIfAbsent(t.type().name(), k -> new long[2]);
                    m[0]++;
                    m[1] += t.byteSize();
                    params += t.elementCount();
                }
                tok = GgufTokenizerData.read(g.metadata());
                gen = GenerationDefaults.read(g.metadata());
            }
        } else {
            o.put("architecture", "qwen35");
            c = Qwen35Config.load(r.path().resolve("config.json"));
            try (SafetensorsCheckpoint ckpt = SafetensorsCheckpoint.open(r.path())) {
                for (TensorView t : ckpt.tensors().values()) {
                    long[] m = mix.computeIfAbsent(t.dtype(), k -> new long[2]);
                    m[0]++;
                    m[1] += t.data().byteSize();
                    params += t.elementCount();
                }
            }
            tok = HfTokenizerFiles.read(r.path(), c.vocabSize());
            gen = HfTokenizerFiles.generationDefaults(r.path());
        }
        o.put("layers", c.numLayers());
        o.put("layer_pattern", c.layerPattern());
        o.put("full_attention_layers", c.numFullAttentionLayers());
        o.put("hidden_size", c.hiddenSize());
        o.put("intermediate_size", c.intermediateSize());
        o.put("attention_heads", c.numHeads());
        o.put("kv_heads", c.numKvHeads());
        o.put("head_dim", c.headDim());
        o.put("vocab_size", c.vocabSize());
        o.put("tied_embeddings", c.tiedEmbeddings());
        o.put("parameters", params);
        ObjectNode types = o.putObject("tensor_types");
        mix.forEach((type, m) -> types.putObject(type).put("tensors", m[0]).put("bytes", m[1]));
        if (tok.isPresent()) {
            GgufTokenizerData t = tok.get();
            ObjectNode tn = o.putObject("tokenizer");
            tn.put("model", t.model());
            tn.put("pre", t.pre());
            tn.put("tokens", t.tokens().length);
            tn.put("merges", t.merges().length);
            o.put("chat_template", t.chatTemplate() != null);
            ArrayNode stops = o.putArray("stop_tokens");
            for (int id : t.stopTokenIds(gen)) {
                ObjectNode s = stops.addObject().put("id", id);
                if (id >= 0 && id < t.tokens().length) {
                    s.put("text", t.tokens()[id]);
                }
            }
        } else {
            o.putNull("tokenizer");
            o.put("chat_template", false);
            o.putArray("stop_tokens");
        }
        o.put("generation", gen.describe());
        return o.toString();
    }
}
