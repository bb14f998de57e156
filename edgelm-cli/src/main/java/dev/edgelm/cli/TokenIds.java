package dev.edgelm.cli;

import dev.edgelm.util.EdgeLmException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** Token id lists on the command line: parses {@code 1,2,3} or {@code @file} (commas or white space); prints ids space-separated. */
final class TokenIds {
    private TokenIds() {}

    static int[] parse(String spec, String option) {
        String text = spec;
        String where = option;
        if (spec.startsWith("@")) {
            Path file = Path.of(spec.substring(1));
            try {
                text = Files.readString(file);
            } catch (IOException e) {
                throw new EdgeLmException(option + ": cannot read " + file + ": " + e.getMessage());
            }
            where = option + " " + file;
        }
        String[] parts = text.trim().split("[,\\s]+");
        if (parts.length == 1 && parts[0].isEmpty()) {
            throw new EdgeLmException(where + ": no token ids given");
        }
        int[] ids = new int[parts.length];
        for (int i = 0; i < parts.length; i++) {
            try {
                ids[i] = Integer.parseInt(parts[i]);
            } catch (NumberFormatException e) {
                throw new EdgeLmException(where + ": '" + parts[i] + "' is not a token id");
            }
            if (ids[i] < 0) {
                throw new EdgeLmException(where + ": token id " + ids[i] + " is negative");
            }
        }
        return ids;
    }

    /** {@code ids} separated by single spaces, as the commands print them. */
    static String join(int[] ids) {
        StringBuilder sb = new StringBuilder();
        for (int id : ids) {
            sb.append(sb.isEmpty() ? "" : " ").append(id);
        }
        return sb.toString();
    }
}
