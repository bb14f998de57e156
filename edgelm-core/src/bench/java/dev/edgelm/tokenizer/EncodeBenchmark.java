package dev.edgelm.tokenizer;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.zip.GZIPInputStream;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Single-threaded encode throughput of the Qwen tokenizer. One operation encodes one slice of 1,000,000 UTF-8
 * bytes, so the score in ops/s is the throughput in MB/s. Corpora, from the running JDK's {@code lib/src.zip}:
 * {@code code} is java.base source files (code with its Javadoc), {@code prose} the Javadoc comment text of the
 * same files, 4 MB each. Run from the repository root (the tokenizer is read from the test resources), or give
 * {@code -p tokenizer=PATH} to a tokenizer.json.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(value = 1, jvmArgsAppend = {"-Xmx2g"})
public class EncodeBenchmark {
    private static final int SLICE_BYTES = 1_000_000;
    private static final int SLICES = 4;

    @Param({"code", "prose"})
    public String corpus;

    @Param({"src/test/resources/tokenizers/qwen3/tokenizer.json.gz"})
    public String tokenizer;

    private Tokenizer tok;
    private String[] slices;
    private int next;

    @Setup
    public void setup() throws IOException {
        Path path = Path.of(tokenizer);
        try (InputStream raw = Files.newInputStream(path);
             InputStream in = tokenizer.endsWith(".gz") ? new GZIPInputStream(raw, 1 << 16) : raw) {
            tok = TokenizerJson.read(in, tokenizer);
        }
        slices = corpus(corpus.equals("prose")).toArray(String[]::new);
    }

    @Benchmark
    public int[] encode() {
        String s = slices[next];
        next = (next + 1) % slices.length;
        return tok.encode(s);
    }

    private static List<String> corpus(boolean prose) throws IOException {
        Path zip = Path.of(System.getProperty("java.home"), "lib", "src.zip");
        List<String> out = new ArrayList<>();
        StringBuilder slice = new StringBuilder();
        int sliceBytes = 0;
        try (ZipFile z = new ZipFile(zip.toFile())) {
            for (ZipEntry e : z.stream().filter(e -> e.getName().startsWith("java.base/java/") && e.getName().endsWith(".java"))
                    .sorted(java.util.Comparator.comparing(ZipEntry::getName)).toList()) {
                String text;
                try (InputStream in = z.getInputStream(e)) {
                    text = new String(in.readAllBytes(), StandardCharsets.UTF_8);
                }
                for (String line : text.split("\n")) {
                    String t = line.strip();
                    if (prose && !(t.startsWith("* ") && t.length() > 2)) {
                        continue;
                    }
                    String piece = (prose ? t.substring(2) : line) + "\n";
                    int bytes = piece.getBytes(StandardCharsets.UTF_8).length;
                    if (sliceBytes + bytes > SLICE_BYTES) {
                        out.add(slice.toString());
                        if (out.size() == SLICES) {
                            return out;
                        }
                        slice.setLength(0);
                        sliceBytes = 0;
                    }
                    slice.append(piece);
                    sliceBytes += bytes;
                }
            }
        }
        throw new IOException(zip + ": not enough java.base sources for " + SLICES + " slices");
    }
}
