package dev.edgelm.eval;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.edgelm.util.EdgeLmException;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/** JSON Lines input: one object per non-blank line, errors naming the file and line. */
final class Jsonl {
    static final ObjectMapper JSON = new ObjectMapper();

    private Jsonl() {}

    static List<JsonNode> read(Path file) {
        try (InputStream in = Files.newInputStream(file)) {
            return read(in, file.toString());
        } catch (IOException e) {
            throw new EdgeLmException(file + ": cannot read: " + e.getMessage());
        }
    }

    static List<JsonNode> read(InputStream in, String where) throws IOException {
        List<JsonNode> out = new ArrayList<>();
        BufferedReader r = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8));
        String line;
        int n = 0;
        while ((line = r.readLine()) != null) {
            n++;
            if (line.isBlank()) {
                continue;
            }
            JsonNode node;
            try {
                node = JSON.readTree(line);
            } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
                throw new EdgeLmException(where + " line " + n + ": not JSON: " + e.getOriginalMessage());
            }
            if (!node.isObject()) {
                throw new EdgeLmException(where + " line " + n + ": expected a JSON object");
            }
            out.add(node);
        }
        return out;
    }

    /** A required text field. */
    static String text(JsonNode node, String field, String where) {
        JsonNode v = node.get(field);
        if (v == null || !v.isTextual()) {
            throw new EdgeLmException(where + ": field \"" + field + "\" (a string) is missing");
        }
        return v.asText();
    }
}
