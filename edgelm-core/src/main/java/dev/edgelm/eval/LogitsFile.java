package dev.edgelm.eval;

import dev.edgelm.util.AtomicFiles;
import dev.edgelm.util.EdgeLmException;
import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;

/**
 * llama-perplexity's KL-divergence base file ({@code --kl-divergence-base}), read and written byte for byte:
 *
 * <pre>
 *   "_logits_"  uint32 n_ctx  int32 n_vocab  int32 n_chunk          (little-endian)
 *   int32 tokens[n_chunk * n_ctx]
 *   per chunk, per scored position (n_ctx - 1 - n_ctx/2 of them): nv = 2*((n_vocab+1)/2) + 4 uint16
 *     [float scale][float min_log_prob][q_0 .. q_{n_vocab-1}][pad to even]
 *     log p_i = scale * q_i + min_log_prob, floored 16 nats below the top token
 * </pre>
 *
 * The rows of chunk c are the log-probabilities the base model gave at positions n_ctx/2 .. n_ctx-2 of that
 * chunk (each predicting the next token). See {@link #encode} for the rounding.
 */
public final class LogitsFile {
    private static final byte[] MAGIC = "_logits_".getBytes(StandardCharsets.US_ASCII);
    private static final int HEADER_BYTES = 8 + 3 * 4;
    /** Log-probabilities more than this many nats below the top one are stored as the floor. */
    static final float FLOOR_NATS = 16f;

    private LogitsFile() {}

    /** The header and the evaluated tokens: {@code tokens.length == nCtx * nChunk}. */
    public record Header(int nCtx, int nVocab, int nChunk, int[] tokens) {
        /** Scored positions per chunk: the second half of the chunk, less its last token. */
        public int scoredPerChunk() {
            return LogitsFile.scoredPerChunk(nCtx);
        }

        /** The tokens of chunk {@code c}. */
        public int[] chunk(int c) {
            return Arrays.copyOfRange(tokens, c * nCtx, (c + 1) * nCtx);
        }
    }

    public static int scoredPerChunk(int nCtx) {
        return nCtx - 1 - nCtx / 2;
    }

    /** uint16 units per stored row. */
    public static int rowUnits(int nVocab) {
        return 2 * ((nVocab + 1) / 2) + 4;
    }

    /**
     * Encodes the log-softmax of {@code logits[off .. off+nVocab)} into {@code row} ({@link #rowUnits} long) as
     * llama-perplexity does, with the same single-precision steps, and returns the negative log-likelihood of
     * {@code tok} (float arithmetic, as llama.cpp's value).
     */
    public static double encode(float[] logits, int off, int nVocab, int tok, char[] row) {
        float max = logits[off];
        float min = logits[off];
        for (int i = 1; i < nVocab; i++) {
            max = Math.max(max, logits[off + i]);
            min = Math.min(min, logits[off + i]);
        }
        min = Math.max(min, max - FLOOR_NATS);
        double sumExp = 0;
        for (int i = 0; i < nVocab; i++) {
            sumExp += (float) Math.exp(logits[off + i] - max);
        }
        float logSumExp = (float) Math.log(sumExp);
        float minLogProb = min - max - logSumExp;
        float scale = (max - min) / 65535f;
        putFloat(row, 0, scale);
        putFloat(row, 2, minLogProb);
        if (scale != 0) {
            float inv = 1 / scale;
            for (int i = 0; i < nVocab; i++) {
                float l = logits[off + i];
                row[4 + i] = l > min ? (char) nearestInt(inv * (l - min)) : 0;
            }
        } else {
            Arrays.fill(row, 4, 4 + nVocab, (char) 0);
        }
        Arrays.fill(row, 4 + nVocab, row.length, (char) 0);
        return max + logSumExp - logits[off + tok];
    }

    /** The scale of a stored row. */
    static float scale(char[] row) {
        return getFloat(row, 0);
    }

    /** The minimum log-probability of a stored row. */
    static float minLogProb(char[] row) {
        return getFloat(row, 2);
    }

    /** The stored log-probability of token {@code i}: {@code scale * q_i + min_log_prob}. */
    static float logProb(char[] row, int i) {
        return scale(row) * row[4 + i] + minLogProb(row);
    }

    /** ggml's round-to-nearest through the float mantissa (ties to even), as llama.cpp quantises. */
    static int nearestInt(float f) {
        float v = f + 12582912f;
        int i = Float.floatToRawIntBits(v);
        return (i & 0x007fffff) - 0x00400000;
    }

    private static void putFloat(char[] row, int at, float f) {
        int bits = Float.floatToRawIntBits(f);
        row[at] = (char) (bits & 0xffff);
        row[at + 1] = (char) (bits >>> 16);
    }

    private static float getFloat(char[] row, int at) {
        return Float.intBitsToFloat(row[at] | (row[at + 1] << 16));
    }

    /** Writes a base file: header and tokens first, then the rows of each chunk in order; a temp file until {@link #commit}. */
    public static final class Writer implements AutoCloseable {
        private final Path target;
        private final Path temp;
        private final OutputStream out;
        private final int nVocab;
        private final int rowUnits;
        private final long rowsExpected;
        private final ByteBuffer rowBytes;
        private long rows;
        private boolean committed;

        public Writer(Path target, Header header) {
            this.target = target;
            this.nVocab = header.nVocab();
            this.rowUnits = rowUnits(nVocab);
            this.rowsExpected = (long) header.nChunk() * header.scoredPerChunk();
            this.rowBytes = ByteBuffer.allocate(rowUnits * 2).order(ByteOrder.LITTLE_ENDIAN);
            try {
                this.temp = AtomicFiles.createTemporarySibling(target);
                this.out = new BufferedOutputStream(Files.newOutputStream(temp), 1 << 16);
                ByteBuffer h = ByteBuffer.allocate(HEADER_BYTES + 4 * header.tokens().length).order(ByteOrder.LITTLE_ENDIAN);
                h.put(MAGIC).putInt(header.nCtx()).putInt(header.nVocab()).putInt(header.nChunk());
                for (int t : header.tokens()) {
                    h.putInt(t);
                }
                out.write(h.array());
            } catch (IOException e) {
                throw new EdgeLmException(target + ": cannot write: " + e.getMessage());
            }
        }

        /** Appends one encoded row ({@link #rowUnits} long). */
        public void writeRow(char[] row) {
            if (row.length != rowUnits) {
                throw new IllegalArgumentException("row of " + row.length + " units, expected " + rowUnits);
            }
            rowBytes.clear();
            for (char c : row) {
                rowBytes.putChar(c);
            }
            try {
                out.write(rowBytes.array());
            } catch (IOException e) {
                throw new UncheckedIOException(target + ": cannot write", e);
            }
            rows++;
        }

        /** Finishes the file and moves it onto the target; it must hold every row the header promises. */
        public void commit() {
            if (rows != rowsExpected) {
                throw new IllegalStateException(target + ": " + rows + " rows written, the header promises " + rowsExpected);
            }
            try {
                out.close();
                AtomicFiles.commit(temp, target);
                committed = true;
            } catch (IOException e) {
                throw new EdgeLmException(target + ": cannot write: " + e.getMessage());
            }
        }

        /** Without {@link #commit}: deletes the temporary file, the target stays as it was. */
        @Override
        public void close() {
            if (!committed) {
                try {
                    out.close();
                } catch (IOException ignored) {
                    // the file is deleted anyway
                }
                AtomicFiles.deleteQuietly(temp);
            }
        }
    }

    /** Reads a base file: the header at once (checked against the file's size), then one chunk of rows at a time. */
    public static final class Reader implements AutoCloseable {
        private final Path path;
        private final DataInputStream in;
        private final Header header;
        private final byte[] rowBytes;
        private int chunksRead;

        public Reader(Path path) {
            this.path = path;
            long size;
            try {
                size = Files.size(path);
            } catch (IOException e) {
                throw new EdgeLmException(path + ": cannot read: " + e.getMessage());
            }
            InputStream raw;
            try {
                raw = Files.newInputStream(path);
            } catch (IOException e) {
                throw new EdgeLmException(path + ": cannot read: " + e.getMessage());
            }
            this.in = new DataInputStream(new BufferedInputStream(raw, 1 << 16));
            try {
                byte[] h = readFully(HEADER_BYTES, "the header");
                ByteBuffer b = ByteBuffer.wrap(h).order(ByteOrder.LITTLE_ENDIAN);
                if (!Arrays.equals(Arrays.copyOf(h, 8), MAGIC)) {
                    throw new EdgeLmException(path + ": not a KL-divergence base file (it does not start with \"_logits_\")");
                }
                long nCtx = Integer.toUnsignedLong(b.getInt(8));
                int nVocab = b.getInt(12);
                int nChunk = b.getInt(16);
                if (nCtx < 4 || nCtx > (1 << 24)) {
                    throw new EdgeLmException(path + ": n_ctx " + nCtx + " in the header is out of range [4, 2^24]");
                }
                if (nVocab < 1 || nVocab > (1 << 24)) {
                    throw new EdgeLmException(path + ": n_vocab " + nVocab + " in the header is out of range [1, 2^24]");
                }
                if (nChunk < 1) {
                    throw new EdgeLmException(path + ": n_chunk " + nChunk + " in the header must be at least 1");
                }
                long expected;
                try {
                    expected = Math.addExact(HEADER_BYTES + 4L * nCtx * nChunk, Math.multiplyExact(
                            Math.multiplyExact(2L * rowUnits(nVocab), (long) scoredPerChunk((int) nCtx)), (long) nChunk));
                } catch (ArithmeticException e) {
                    expected = Long.MAX_VALUE;
                }
                if (4L * nCtx * nChunk > Integer.MAX_VALUE - 8) {
                    throw new EdgeLmException(path + ": n_ctx " + nCtx + " x n_chunk " + nChunk + " tokens is more than one file can hold here");
                }
                if (size != expected) {
                    throw new EdgeLmException(path + ": the header (n_ctx " + nCtx + ", n_vocab " + nVocab + ", n_chunk "
                            + nChunk + ") implies " + expected + " bytes, the file has " + size);
                }
                byte[] t = readFully((int) (4 * nCtx * nChunk), "the tokens");
                ByteBuffer tb = ByteBuffer.wrap(t).order(ByteOrder.LITTLE_ENDIAN);
                int[] tokens = new int[(int) (nCtx * nChunk)];
                for (int i = 0; i < tokens.length; i++) {
                    tokens[i] = tb.getInt();
                    if (tokens[i] < 0 || tokens[i] >= nVocab) {
                        throw new EdgeLmException(path + ": token " + i + " is " + tokens[i] + ", outside the vocabulary [0, " + nVocab + ")");
                    }
                }
                this.header = new Header((int) nCtx, nVocab, nChunk, tokens);
                this.rowBytes = new byte[2 * rowUnits(nVocab)];
            } catch (RuntimeException e) {
                closeQuietly();
                throw e;
            }
        }

        public Header header() {
            return header;
        }

        /** The rows of the next chunk: {@code rows[k]} belongs to position {@code n_ctx/2 + k}. */
        public char[][] nextChunk() {
            if (chunksRead == header.nChunk()) {
                throw new IllegalStateException("all " + chunksRead + " chunks read");
            }
            int units = rowUnits(header.nVocab());
            char[][] rows = new char[header.scoredPerChunk()][units];
            for (char[] row : rows) {
                try {
                    in.readFully(rowBytes);
                } catch (IOException e) {
                    throw new EdgeLmException(path + ": cannot read the log-probabilities of chunk " + (chunksRead + 1) + ": " + e.getMessage());
                }
                for (int i = 0; i < units; i++) {
                    row[i] = (char) ((rowBytes[2 * i] & 0xff) | ((rowBytes[2 * i + 1] & 0xff) << 8));
                }
            }
            chunksRead++;
            return rows;
        }

        private byte[] readFully(int n, String what) {
            byte[] b = new byte[n];
            try {
                in.readFully(b);
            } catch (EOFException e) {
                throw new EdgeLmException(path + ": the file ends inside " + what);
            } catch (IOException e) {
                throw new EdgeLmException(path + ": cannot read " + what + ": " + e.getMessage());
            }
            return b;
        }

        private void closeQuietly() {
            try {
                in.close();
            } catch (IOException ignored) {
                // reading failed already
            }
        }

        @Override
        public void close() {
            closeQuietly();
        }
    }
}
