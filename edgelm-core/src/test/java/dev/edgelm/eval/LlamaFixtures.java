package dev.edgelm.eval;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** llama.cpp's own outputs on the mini GGUF files (fixtures/eval/README.md), parsed from its logs. */
final class LlamaFixtures {
    static final Path DIR = Path.of("src/test/resources/fixtures/eval");
    static final Path MINI = Path.of("src/test/resources/fixtures/gguf/mini");
    static final Path TEXT = DIR.resolve("text.txt");
    static final Path BASE = DIR.resolve("mini-BF16-c128.kld");

    private LlamaFixtures() {}

    static String read(String name) {
        try {
            return Files.readString(DIR.resolve(name));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The {@code [i]ppl,} running estimates of a perplexity log. */
    static List<Double> runningPpl(String log) {
        List<Double> out = new ArrayList<>();
        Matcher m = Pattern.compile("\\[(\\d+)\\]([0-9.]+),").matcher(log);
        while (m.find()) {
            out.add(Double.parseDouble(m.group(2)));
        }
        return out;
    }

    /** {@code Final estimate: PPL = X +/- Y}. */
    static double[] finalEstimate(String log) {
        Matcher m = Pattern.compile("Final estimate: PPL = ([0-9.]+) \\+/- ([0-9.]+)").matcher(log);
        if (!m.find()) {
            throw new AssertionError("no final estimate in the log");
        }
        return new double[] {Double.parseDouble(m.group(1)), Double.parseDouble(m.group(2))};
    }

    /**
     * The summary lines of a KL-divergence log, by their label ("Mean PPL(Q)", "99.9%   KLD", "Same top p", ...):
     * the value and, where printed, the uncertainty (percent signs dropped: values stay in llama.cpp's units).
     */
    static Map<String, double[]> summary(String log) {
        Map<String, double[]> out = new LinkedHashMap<>();
        int start = log.indexOf("====== Perplexity statistics");
        Pattern line = Pattern.compile("^(.+?)\\s*:\\s*(-?[0-9.]+)%?(?:\\s*±\\s*(-?[0-9.]+))?\\s*%?\\s*$");
        for (String l : log.substring(start).split("\n")) {
            Matcher m = line.matcher(l.strip());
            if (m.matches()) {
                double unc = m.group(3) == null ? Double.NaN : Double.parseDouble(m.group(3));
                out.put(m.group(1).strip(), new double[] {Double.parseDouble(m.group(2)), unc});
            }
        }
        return out;
    }
}
