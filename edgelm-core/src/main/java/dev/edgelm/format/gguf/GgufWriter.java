package dev.edgelm.format.gguf;

import dev.edgelm.tensor.GgmlType;
import dev.edgelm.util.AtomicFiles;
import dev.edgelm.util.EdgeLmException;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Writes a GGUF v3 file as a stream: the header (metadata and tensor infos, whose offsets follow from the
 * declared shapes and types) first, then each tensor's bytes in declaration order, each padded to the
 * alignment. Only the current write buffer is held in memory.
 *
 * <p>The bytes go to a temporary file next to the target, which {@link #finish()} renames onto the
 * target; {@link #close()} without {@code finish()} (an exception) and a JVM shutdown (Ctrl+C) delete it,
 * so the target is never half-written.
 */
public final class GgufWriter implements AutoCloseable {
    public static final int VERSION = 3;
    private static final int BUFFER_BYTES = 1 << 22;

    /** A tensor to be written: ggml-order dims (row length first) and storage type. */
    public record TensorSpec(String name, long[] dims, GgmlType type) {
        public TensorSpec {
            dims = dims.clone();
        }

        @Override
        public long[] dims() {
            return dims.clone();
        }
    }

    private final Path target;
    private final Path temp;
    private final FileChannel channel;
    private final Thread cleanup;
    private final List<GgufTensorInfo> infos;
    private final int alignment;
    private final long totalBytes;
    private final ByteBuffer buffer = ByteBuffer.allocateDirect(BUFFER_BYTES).order(ByteOrder.LITTLE_ENDIAN);
    private int current;
    private long writtenOfCurrent;
    private long written;
    private boolean finished;

    private GgufWriter(Path target, Path temp, FileChannel channel, Thread cleanup, List<GgufTensorInfo> infos,
                       int alignment, long totalBytes) {
        this.target = target;
        this.temp = temp;
        this.channel = channel;
        this.cleanup = cleanup;
        this.infos = infos;
        this.alignment = alignment;
        this.totalBytes = totalBytes;
    }

    /** What went wrong, without the temporary file's name (errors name the target the user gave). */
    private static String reason(IOException e) {
        if (e instanceof java.nio.file.FileSystemException f && f.getReason() != null) {
            return f.getReason();
        }
        return String.valueOf(e.getMessage());
    }

    /** Opens a temporary file next to {@code target} and writes the header into it. */
    public static GgufWriter create(Path target, Map<String, GgufValue> metadata, List<TensorSpec> tensors) {
        int alignment = alignmentOf(metadata);
        List<GgufTensorInfo> infos = layout(tensors, alignment);
        byte[] header = encodeHeader(metadata, infos);
        long dataStart = GgufFile.alignUp(header.length, alignment);
        long total = dataStart;
        for (GgufTensorInfo t : infos) {
            total = GgufFile.alignUp(total + t.byteSize(), alignment);
        }
        Path temp;
        try {
            temp = AtomicFiles.createTemporarySibling(target);
        } catch (IOException e) {
            throw new EdgeLmException(target + ": cannot create a file in " + target.toAbsolutePath().getParent() + ": "
                    + reason(e), e);
        }
        Thread cleanup = new Thread(() -> AtomicFiles.deleteQuietly(temp), "gguf-writer-cleanup");
        Runtime.getRuntime().addShutdownHook(cleanup);
        FileChannel ch = null;
        try {
            ch = FileChannel.open(temp, StandardOpenOption.WRITE, StandardOpenOption.TRUNCATE_EXISTING);
            GgufWriter w = new GgufWriter(target, temp, ch, cleanup, infos, alignment, total);
            w.put(ByteBuffer.wrap(header));
            w.pad();
            w.skipEmptyTensors();
            return w;
        } catch (IOException | RuntimeException e) {
            closeQuietly(ch);
            AtomicFiles.deleteQuietly(temp);
            removeHook(cleanup);
            throw e instanceof IOException io ? new EdgeLmException(target + ": cannot write: " + reason(io), io) : (RuntimeException) e;
        }
    }

    /** The header entries as they will be written, with their offsets. */
    public List<GgufTensorInfo> tensorInfos() {
        return infos;
    }

    /** Size of the finished file. */
    public long totalBytes() {
        return totalBytes;
    }

    /** Bytes written so far, header and padding included. */
    public long bytesWritten() {
        return written + buffer.position();
    }

    /** The tensor whose bytes come next, or null when all are written. */
    public GgufTensorInfo currentTensor() {
        return current < infos.size() ? infos.get(current) : null;
    }

    /** Appends bytes of the current tensor; crossing into the next tensor is not allowed. */
    public void write(byte[] bytes, int off, int len) {
        write(ByteBuffer.wrap(bytes, off, len));
    }

    public void write(ByteBuffer src) {
        while (src.hasRemaining()) {
            GgufTensorInfo t = currentTensor();
            if (t == null) {
                throw new IllegalStateException("every tensor is already written");
            }
            long left = t.byteSize() - writtenOfCurrent;
            int n = (int) Math.min(left, src.remaining());
            ByteBuffer part = src.slice(src.position(), n);
            src.position(src.position() + n);
            try {
                put(part);
            } catch (IOException e) {
                throw new EdgeLmException(target + ": cannot write: " + reason(e), e);
            }
            writtenOfCurrent += n;
            if (writtenOfCurrent == t.byteSize()) {
                try {
                    pad();
                } catch (IOException e) {
                    throw new EdgeLmException(target + ": cannot write: " + reason(e), e);
                }
                current++;
                writtenOfCurrent = 0;
                skipEmptyTensors();
            }
        }
    }

    /** Tensors with no elements take no bytes: move past them. */
    private void skipEmptyTensors() {
        while (currentTensor() != null && currentTensor().byteSize() == 0) {
            current++;
        }
    }

    /** Checks that every tensor was written, then syncs the temporary file and renames it onto the target. */
    public void finish() {
        if (currentTensor() != null) {
            throw new IllegalStateException("tensor " + currentTensor().name() + " and later ones are not written yet");
        }
        try {
            flush();
            channel.close();
            AtomicFiles.commit(temp, target);
        } catch (IOException e) {
            throw new EdgeLmException(target + ": cannot write: " + reason(e), e);
        }
        finished = true;
        removeHook(cleanup);
    }

    /** Without a successful {@link #finish()}: deletes the temporary file. */
    @Override
    public void close() {
        if (!finished) {
            closeQuietly(channel);
            AtomicFiles.deleteQuietly(temp);
            removeHook(cleanup);
            finished = true;
        }
    }

    private void put(ByteBuffer src) throws IOException {
        while (src.hasRemaining()) {
            if (!buffer.hasRemaining()) {
                flush();
            }
            int n = Math.min(buffer.remaining(), src.remaining());
            buffer.put(buffer.position(), src, src.position(), n);
            buffer.position(buffer.position() + n);
            src.position(src.position() + n);
        }
    }

    private void pad() throws IOException {
        long pos = bytesWritten();
        int n = (int) (GgufFile.alignUp(pos, alignment) - pos);
        put(ByteBuffer.allocate(n));
    }

    private void flush() throws IOException {
        buffer.flip();
        while (buffer.hasRemaining()) {
            written += channel.write(buffer);
        }
        buffer.clear();
    }

    private static int alignmentOf(Map<String, GgufValue> metadata) {
        GgufValue a = metadata.get(GgufFile.ALIGNMENT_KEY);
        if (a == null) {
            return GgufFile.DEFAULT_ALIGNMENT;
        }
        long v = a.asLong();
        if (a.type() != GgufValueType.UINT32 || v <= 0 || Long.bitCount(v) != 1) {
            throw new IllegalArgumentException(GgufFile.ALIGNMENT_KEY + " must be a u32 power of two, got " + a.describeType() + " " + a);
        }
        return (int) v;
    }

    /** Offsets of each tensor in declaration order, each start aligned. */
    static List<GgufTensorInfo> layout(List<TensorSpec> specs, int alignment) {
        List<GgufTensorInfo> out = new ArrayList<>();
        Set<String> names = new HashSet<>();
        long offset = 0;
        for (TensorSpec s : specs) {
            if (!names.add(s.name())) {
                throw new IllegalArgumentException("tensor " + s.name() + " declared twice");
            }
            long[] dims = s.dims();
            if (dims.length < 1 || dims.length > GgufFile.MAX_DIMS || Arrays.stream(dims).anyMatch(d -> d < 0)) {
                throw new IllegalArgumentException("tensor " + s.name() + ": invalid dims " + Arrays.toString(dims));
            }
            if (dims[0] % s.type().blockSize() != 0) {
                throw new IllegalArgumentException("tensor " + s.name() + ": row length " + dims[0] + " is not a multiple of the "
                        + s.type() + " block size " + s.type().blockSize());
            }
            GgufTensorInfo info = new GgufTensorInfo(s.name(), dims, s.type(), offset);
            out.add(info);
            offset = GgufFile.alignUp(offset + info.byteSize(), alignment);
        }
        return List.copyOf(out);
    }

    static byte[] encodeHeader(Map<String, GgufValue> metadata, List<GgufTensorInfo> infos) {
        Encoder e = new Encoder();
        e.u32(GgufFile.MAGIC);
        e.u32(VERSION);
        e.u64(infos.size());
        e.u64(metadata.size());
        for (Map.Entry<String, GgufValue> kv : metadata.entrySet()) {
            e.string(kv.getKey());
            e.u32(kv.getValue().type().id());
            e.value(kv.getValue());
        }
        for (GgufTensorInfo t : infos) {
            e.string(t.name());
            e.u32(t.nDims());
            for (long d : t.dims()) {
                e.u64(d);
            }
            e.u32(t.type().id());
            e.u64(t.offset());
        }
        return e.out.toByteArray();
    }

    /** Little-endian encoding of header fields. */
    private static final class Encoder {
        final ByteArrayOutputStream out = new ByteArrayOutputStream(1 << 16);
        private final ByteBuffer scratch = ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN);

        void u32(long v) {
            scratch.clear();
            scratch.putInt((int) v);
            out.write(scratch.array(), 0, 4);
        }

        void u64(long v) {
            scratch.clear();
            scratch.putLong(v);
            out.write(scratch.array(), 0, 8);
        }

        void string(String s) {
            byte[] b = s.getBytes(StandardCharsets.UTF_8);
            u64(b.length);
            out.write(b, 0, b.length);
        }

        void integer(GgufValueType t, long v) {
            switch (t.size()) {
                case 1 -> out.write((int) v);
                case 2 -> {
                    out.write((int) v);
                    out.write((int) (v >>> 8));
                }
                case 4 -> u32(v);
                default -> u64(v);
            }
        }

        void value(GgufValue v) {
            GgufValueType t = v.type();
            switch (t) {
                case FLOAT32 -> u32(Float.floatToRawIntBits((float) v.asDouble()));
                case FLOAT64 -> u64(Double.doubleToRawLongBits(v.asDouble()));
                case BOOL -> out.write(v.asBoolean() ? 1 : 0);
                case STRING -> string(v.asString());
                case ARRAY -> array(v);
                default -> integer(t, v.rawLong());
            }
        }

        void array(GgufValue v) {
            GgufValueType et = v.elementType();
            u32(et.id());
            u64(v.length());
            Object raw = v.raw();
            switch (et) {
                case FLOAT32 -> {
                    for (float f : (float[]) raw) {
                        u32(Float.floatToRawIntBits(f));
                    }
                }
                case FLOAT64 -> {
                    for (double d : (double[]) raw) {
                        u64(Double.doubleToRawLongBits(d));
                    }
                }
                case BOOL -> {
                    for (boolean b : (boolean[]) raw) {
                        out.write(b ? 1 : 0);
                    }
                }
                case STRING -> {
                    for (String s : (String[]) raw) {
                        string(s);
                    }
                }
                case ARRAY -> {
                    for (GgufValue inner : (GgufValue[]) raw) {
                        array(inner);
                    }
                }
                default -> {
                    for (long l : (long[]) raw) {
                        integer(et, l);
                    }
                }
            }
        }
    }

    private static void removeHook(Thread hook) {
        try {
            Runtime.getRuntime().removeShutdownHook(hook);
        } catch (IllegalStateException e) {
            // the JVM is already shutting down: the hook runs and deletes the file
        }
    }

    private static void closeQuietly(FileChannel ch) {
        if (ch != null) {
            try {
                ch.close();
            } catch (IOException e) {
                // nothing to do: the file is deleted next
            }
        }
    }
}
