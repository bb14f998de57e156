package dev.edgelm.format.safetensors;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.edgelm.tensor.TensorView;
import dev.edgelm.util.EdgeLmException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;

/**
 * The weights of a Hugging Face checkpoint folder: one {@code model.safetensors}, or shards listed by
 * {@code model.safetensors.index.json} ({@code weight_map: tensor name -> shard file}).
 */
public final class SafetensorsCheckpoint implements AutoCloseable {
    private final List<SafetensorsFile> files;
    private final Map<String, TensorView> tensors;

    private SafetensorsCheckpoint(List<SafetensorsFile> files, Map<String, TensorView> tensors) {
        this.files = files;
        this.tensors = tensors;
    }

    public static SafetensorsCheckpoint open(Path folder) {
        Path index = folder.resolve("model.safetensors.index.json");
        Path single = folder.resolve("model.safetensors");
        List<SafetensorsFile> files = new ArrayList<>();
        Map<String, TensorView> tensors = new LinkedHashMap<>();
        try {
            if (Files.isRegularFile(index)) {
                Map<String, String> weightMap = readIndex(index);
                for (String shard : new TreeSet<>(weightMap.values())) {
                    Path p = folder.resolve(shard).normalize();
                    if (!p.startsWith(folder.normalize()) || !Files.isRegularFile(p)) {
                        throw new EdgeLmException(index + ": shard '" + shard + "' is not a file in " + folder);
                    }
                    files.add(SafetensorsFile.open(p));
                }
                Map<String, TensorView> all = new LinkedHashMap<>();
                for (SafetensorsFile f : files) {
                    all.putAll(f.tensors());
                }
                for (Map.Entry<String, String> e : weightMap.entrySet()) {
                    TensorView t = all.get(e.getKey());
                    if (t == null || !Path.of(t.source()).getFileName().toString().equals(Path.of(e.getValue()).getFileName().toString())) {
                        throw new EdgeLmException(index + ": tensor " + e.getKey() + " is listed in shard "
                                + e.getValue() + " but that shard does not contain it");
                    }
                    tensors.put(e.getKey(), t);
                }
            } else if (Files.isRegularFile(single)) {
                SafetensorsFile f = SafetensorsFile.open(single);
                files.add(f);
                tensors.putAll(f.tensors());
            } else {
                throw new EdgeLmException(folder + ": no model.safetensors or model.safetensors.index.json");
            }
        } catch (RuntimeException e) {
            files.forEach(SafetensorsFile::close);
            throw e;
        }
        return new SafetensorsCheckpoint(files, tensors);
    }

    private static Map<String, String> readIndex(Path index) {
        JsonNode root;
        try {
            root = new ObjectMapper().readTree(Files.readString(index));
        } catch (IOException e) {
            throw new EdgeLmException(index + ": cannot read or parse: " + e.getMessage());
        }
        JsonNode map = root == null ? null : root.get("weight_map");
        if (map == null || !map.isObject()) {
            throw new EdgeLmException(index + ": missing object field 'weight_map'");
        }
        Map<String, String> out = new LinkedHashMap<>();
        for (Iterator<Map.Entry<String, JsonNode>> it = map.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> e = it.next();
            if (!e.getValue().isTextual()) {
                throw new EdgeLmException(index + ": weight_map entry " + e.getKey() + " is not a file name");
            }
            out.put(e.getKey(), e.getValue().asText());
        }
        return out;
    }

    public Map<String, TensorView> tensors() {
        return tensors;
    }

    @Override
    public void close() {
        files.forEach(SafetensorsFile::close);
    }
}
