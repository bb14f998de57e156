package dev.edgelm.format.gguf;

import dev.edgelm.format.ModelMemory;
import dev.edgelm.tensor.GgmlType;
import dev.edgelm.util.EdgeLmException;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A GGUF file (version 2 or 3, little-endian), memory-mapped. Layout: magic {@code GGUF}, u32 version,
 * u64 tensor count, u64 metadata count, the metadata key/value pairs, the tensor infos, padding to
 * {@code general.alignment} (default 32), then the tensor data at aligned offsets.
 *
 * <p>The whole header is validated before anything is used: every count and length is checked against
 * the bytes that remain before anything is allocated, so a corrupt or hostile header is an
 * {@link EdgeLmException} naming the file and the field, never an out-of-bounds read or an
 * OutOfMemoryError.
 */
public final class GgufFile implements AutoCloseable {
    public static final int MAGIC = 0x46554747; // "GGUF" read as a little-endian u32
    public static final int DEFAULT_ALIGNMENT = 32;
    public static final String ALIGNMENT_KEY = "general.alignment";
    /** ggml's GGML_MAX_DIMS. */
    public static final int MAX_DIMS = 4;
    private static final int MAX_ARRAY_NESTING = 8;

    private final String source;
    private final Arena arena;
    private final MemorySegment file;
    private final int version;
    private final GgufMetadata metadata;
    private final Map<String, GgufTensorInfo> tensorInfos;
    private final int alignment;
    private final long dataOffset;

    private GgufFile(String source, Arena arena, MemorySegment file, int version, GgufMetadata metadata,
                     Map<String, GgufTensorInfo> tensorInfos, int alignment, long dataOffset) {
        this.source = source;
        this.arena = arena;
        this.file = file;
        this.version = version;
        this.metadata = metadata;
        this.tensorInfos = tensorInfos;
        this.alignment = alignment;
        this.dataOffset = dataOffset;
    }

    /** Whether {@code path} is named as a GGUF file ({@code .gguf}, any case). */
    public static boolean isGgufName(Path path) {
        Path name = path.getFileName();
        return name != null && name.toString().toLowerCase(java.util.Locale.ROOT).endsWith(".gguf");
    }

    /** Maps and validates {@code path}. */
    public static GgufFile open(Path path) {
        return open(path, ModelMemory.Mode.MAPPED);
    }

    /** Validates {@code path}, its bytes held as {@code memory} says (see {@link ModelMemory}). */
    public static GgufFile open(Path path, ModelMemory.Mode memory) {
        Arena arena = Arena.ofShared();
        try {
            MemorySegment seg;
            try (FileChannel ch = FileChannel.open(path, StandardOpenOption.READ)) {
                seg = ModelMemory.load(ch, arena, memory);
            }
            return parse(seg, path.toString(), arena);
        } catch (IOException e) {
            arena.close();
            throw new EdgeLmException(path + ": cannot read: " + e.getMessage(), e);
        } catch (RuntimeException | Error e) {
            arena.close();
            throw e;
        }
    }

    /** Validates GGUF bytes already in memory; {@code source} names them in errors. */
    public static GgufFile read(MemorySegment bytes, String source) {
        return parse(bytes, source, null);
    }

    private static GgufFile parse(MemorySegment seg, String src, Arena arena) {
        Reader r = new Reader(seg, src);
        if (seg.byteSize() < 4 || r.u32("magic") != MAGIC) {
            throw new EdgeLmException(src + ": not a GGUF file (no GGUF magic)");
        }
        long version = r.u32("version");
        if (version != 2 && version != 3) {
            String hint = Integer.reverseBytes((int) version) == 3 ? " (a big-endian file, which EdgeLM does not read)" : "";
            throw new EdgeLmException(src + ": unsupported GGUF version " + version + hint + "; EdgeLM reads versions 2 and 3");
        }
        long tensorCount = r.count("tensor count", 24);
        long kvCount = r.count("metadata count", 8 + 4 + 1);
        Map<String, GgufValue> kv = new LinkedHashMap<>();
        for (long i = 0; i < kvCount; i++) {
            String key = r.string("metadata key #" + i);
            long typeId = r.u32("type of metadata key '" + key + "'");
            GgufValueType type = GgufValueType.byId(typeId);
            if (type == null) {
                throw new EdgeLmException(src + ": metadata key '" + key + "' has unknown value type " + typeId);
            }
            GgufValue v = r.value(type, "metadata key '" + key + "'", 0);
            if (kv.put(key, v) != null) {
                throw new EdgeLmException(src + ": metadata key '" + key + "' appears twice");
            }
        }
        GgufMetadata metadata = new GgufMetadata(kv, src);
        int alignment = DEFAULT_ALIGNMENT;
        GgufValue a = kv.get(ALIGNMENT_KEY);
        if (a != null) {
            if (a.type() != GgufValueType.UINT32 && a.type() != GgufValueType.INT32) {
                throw new EdgeLmException(src + ": " + ALIGNMENT_KEY + " is " + a.describeType() + ", expected u32");
            }
            long al = a.asLong();
            if (al <= 0 || al > (1 << 30) || Long.bitCount(al) != 1) {
                throw new EdgeLmException(src + ": " + ALIGNMENT_KEY + " = " + al + " is not a power of two");
            }
            alignment = (int) al;
        }
        Map<String, GgufTensorInfo> infos = new LinkedHashMap<>();
        for (long i = 0; i < tensorCount; i++) {
            GgufTensorInfo t = r.tensorInfo(i);
            if (infos.put(t.name(), t) != null) {
                throw new EdgeLmException(src + ": tensor " + t.name() + " appears twice");
            }
        }
        long dataOffset = alignUp(r.pos, alignment);
        validateData(src, seg.byteSize(), dataOffset, alignment, infos);
        return new GgufFile(src, arena, seg, (int) version, metadata, Collections.unmodifiableMap(infos), alignment, dataOffset);
    }

    private static void validateData(String src, long fileSize, long dataOffset, int alignment, Map<String, GgufTensorInfo> infos) {
        List<GgufTensorInfo> sorted = new ArrayList<>(infos.values());
        long dataSize = fileSize - dataOffset;
        for (GgufTensorInfo t : sorted) {
            String where = src + ": tensor " + t.name();
            if (t.offset() < 0 || t.offset() % alignment != 0) {
                throw new EdgeLmException(where + ": offset " + Long.toUnsignedString(t.offset()) + " is not a multiple of the alignment " + alignment);
            }
            long size = t.byteSize();
            if (dataSize < 0 || t.offset() > dataSize || size > dataSize - t.offset()) {
                throw new EdgeLmException(where + ": data [" + t.offset() + ", +" + size + ") runs past the end of the file ("
                        + fileSize + " bytes, data section starts at " + dataOffset + ")");
            }
        }
        sorted.sort(Comparator.comparingLong(GgufTensorInfo::offset));
        for (int i = 1; i < sorted.size(); i++) {
            GgufTensorInfo prev = sorted.get(i - 1);
            GgufTensorInfo cur = sorted.get(i);
            if (cur.offset() < prev.offset() + prev.byteSize()) {
                throw new EdgeLmException(src + ": tensors " + prev.name() + " and " + cur.name() + " overlap");
            }
        }
    }

    static long alignUp(long pos, long alignment) {
        return (pos + alignment - 1) / alignment * alignment;
    }

    /** Bounds-checked little-endian reads over the header; every failure names the field being read. */
    private static final class Reader {
        private static final ValueLayout.OfInt U32 = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
        private static final ValueLayout.OfLong U64 = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
        private static final ValueLayout.OfShort U16 = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
        private static final ValueLayout.OfFloat F32 = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
        private static final ValueLayout.OfDouble F64 = ValueLayout.JAVA_DOUBLE_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

        final MemorySegment seg;
        final String src;
        /** One strict decoder for every string of the header (a new one per string cost ~250k allocations). */
        private final CharsetDecoder utf8 = StandardCharsets.UTF_8.newDecoder()
                .onMalformedInput(CodingErrorAction.REPORT)
                .onUnmappableCharacter(CodingErrorAction.REPORT);
        /** The bytes of the string being read, reused (a slice and a byte buffer per string cost more than the decoding). */
        private byte[] buffer = new byte[256];
        long pos;

        Reader(MemorySegment seg, String src) {
            this.seg = seg;
            this.src = src;
        }

        long remaining() {
            return seg.byteSize() - pos;
        }

        void need(long n, String what) {
            if (n < 0 || n > remaining()) {
                throw new EdgeLmException(src + ": truncated header: " + what + " needs "
                        + (n < 0 ? Long.toUnsignedString(n) : n) + " bytes at offset " + pos + " but the file ends at " + seg.byteSize());
            }
        }

        long u32(String what) {
            need(4, what);
            long v = Integer.toUnsignedLong(seg.get(U32, pos));
            pos += 4;
            return v;
        }

        long u64(String what) {
            need(8, what);
            long v = seg.get(U64, pos);
            pos += 8;
            return v;
        }

        /** A u64 count of items of at least {@code minItemBytes} each, bounded by the bytes that remain. */
        long count(String what, long minItemBytes) {
            long n = u64(what);
            if (n < 0 || (minItemBytes > 0 && n > remaining() / minItemBytes)) {
                throw new EdgeLmException(src + ": " + what + " " + Long.toUnsignedString(n)
                        + " is impossible: only " + remaining() + " bytes remain at offset " + pos);
            }
            return n;
        }

        String string(String what) {
            return string(what, -1);
        }

        /**
         * A string; {@code index >= 0} appends {@code " #index"} to {@code what} in errors (built only then:
         * a vocabulary array holds hundreds of thousands of strings).
         */
        String string(String what, long index) {
            if (remaining() < 8) {
                need(8, "length of " + numbered(what, index));
            }
            long len = seg.get(U64, pos);
            pos += 8;
            if (len < 0 || len > remaining()) {
                throw new EdgeLmException(src + ": " + numbered(what, index) + ": string length " + Long.toUnsignedString(len)
                        + " runs past the end of the file (" + remaining() + " bytes remain at offset " + pos + ")");
            }
            if (len > Integer.MAX_VALUE - 16) {
                throw new EdgeLmException(src + ": " + numbered(what, index) + ": string length " + len + " is too large");
            }
            int n = (int) len;
            if (buffer.length < n) {
                buffer = new byte[Math.max(n, 2 * buffer.length)];
            }
            MemorySegment.copy(seg, ValueLayout.JAVA_BYTE, pos, buffer, 0, n);
            String s;
            if (ascii(buffer, n)) {
                // the common case (most vocabulary entries): a string straight from the bytes, no decoder
                s = new String(buffer, 0, n, StandardCharsets.ISO_8859_1);
            } else {
                try {
                    s = utf8.decode(ByteBuffer.wrap(buffer, 0, n)).toString();
                } catch (CharacterCodingException e) {
                    throw new EdgeLmException(src + ": " + numbered(what, index) + ": string at offset " + pos + " is not valid UTF-8");
                }
            }
            pos += len;
            return s;
        }

        private static boolean ascii(byte[] b, int n) {
            for (int i = 0; i < n; i++) {
                if (b[i] < 0) {
                    return false;
                }
            }
            return true;
        }

        private static String numbered(String what, long index) {
            return index < 0 ? what : what + " #" + index;
        }

        GgufValue value(GgufValueType type, String what, int depth) {
            return switch (type) {
                case UINT8 -> GgufValue.scalarOf(type, (long) Byte.toUnsignedInt(bytes(1, what).get(0)));
                case INT8 -> GgufValue.scalarOf(type, (long) bytes(1, what).get(0));
                case UINT16 -> GgufValue.scalarOf(type, (long) Short.toUnsignedInt(short16(what)));
                case INT16 -> GgufValue.scalarOf(type, (long) short16(what));
                case UINT32 -> GgufValue.scalarOf(type, u32(what));
                case INT32 -> GgufValue.scalarOf(type, (long) (int) u32(what));
                case UINT64, INT64 -> GgufValue.scalarOf(type, u64(what));
                case FLOAT32 -> {
                    need(4, what);
                    float f = seg.get(F32, pos);
                    pos += 4;
                    yield GgufValue.scalarOf(type, f);
                }
                case FLOAT64 -> {
                    need(8, what);
                    double d = seg.get(F64, pos);
                    pos += 8;
                    yield GgufValue.scalarOf(type, d);
                }
                case BOOL -> GgufValue.scalarOf(type, bool(what));
                case STRING -> GgufValue.scalarOf(type, string(what));
                case ARRAY -> array(what, depth);
            };
        }

        private ByteBuffer bytes(int n, String what) {
            need(n, what);
            ByteBuffer b = seg.asSlice(pos, n).asByteBuffer();
            pos += n;
            return b;
        }

        private short short16(String what) {
            need(2, what);
            short v = seg.get(U16, pos);
            pos += 2;
            return v;
        }

        private boolean bool(String what) {
            need(1, what);
            byte b = seg.get(ValueLayout.JAVA_BYTE, pos);
            if (b != 0 && b != 1) {
                throw new EdgeLmException(src + ": " + what + ": bool byte " + b + " at offset " + pos + " is neither 0 nor 1");
            }
            pos++;
            return b == 1;
        }

        private GgufValue array(String what, int depth) {
            if (depth >= MAX_ARRAY_NESTING) {
                throw new EdgeLmException(src + ": " + what + ": arrays nested deeper than " + MAX_ARRAY_NESTING);
            }
            long elemId = u32("element type of " + what);
            GgufValueType et = GgufValueType.byId(elemId);
            if (et == null) {
                throw new EdgeLmException(src + ": " + what + ": array has unknown element type " + elemId);
            }
            long count = count("element count of " + what, et.minEncodedSize());
            if (count > Integer.MAX_VALUE - 8) {
                throw new EdgeLmException(src + ": " + what + ": array of " + count + " elements is too large");
            }
            int n = (int) count;
            String elem = what + " element";
            switch (et) {
                case INT32, UINT32 -> { // token types: one read per element, not a boxed value each
                    need(4L * n, elem + "s");
                    long[] out = new long[n];
                    for (int i = 0; i < n; i++) {
                        int v = seg.get(U32, pos + 4L * i);
                        out[i] = et == GgufValueType.INT32 ? v : Integer.toUnsignedLong(v);
                    }
                    pos += 4L * n;
                    return GgufValue.arrayOf(et, out);
                }
                case UINT8, INT8, UINT16, INT16, UINT64, INT64 -> {
                    long[] out = new long[n];
                    for (int i = 0; i < n; i++) {
                        out[i] = value(et, elem, depth).rawLong();
                    }
                    return GgufValue.arrayOf(et, out);
                }
                case FLOAT32 -> {
                    float[] out = new float[n];
                    MemorySegment.copy(seg, F32, pos, out, 0, n);
                    pos += 4L * n;
                    return GgufValue.arrayOf(et, out);
                }
                case FLOAT64 -> {
                    double[] out = new double[n];
                    MemorySegment.copy(seg, F64, pos, out, 0, n);
                    pos += 8L * n;
                    return GgufValue.arrayOf(et, out);
                }
                case BOOL -> {
                    boolean[] out = new boolean[n];
                    for (int i = 0; i < n; i++) {
                        out[i] = bool(elem);
                    }
                    return GgufValue.arrayOf(et, out);
                }
                case STRING -> {
                    String[] out = new String[n];
                    for (int i = 0; i < n; i++) {
                        out[i] = string(elem, i);
                    }
                    return GgufValue.arrayOf(et, out);
                }
                default -> {
                    GgufValue[] out = new GgufValue[n];
                    for (int i = 0; i < n; i++) {
                        out[i] = array(elem + " #" + i, depth + 1);
                    }
                    return GgufValue.arrayOf(et, out);
                }
            }
        }

        GgufTensorInfo tensorInfo(long index) {
            String name = string("name of tensor #" + index);
            String where = src + ": tensor " + name;
            long nDims = u32("dimension count of tensor " + name);
            if (nDims < 1 || nDims > MAX_DIMS) {
                throw new EdgeLmException(where + " has " + nDims + " dimensions (1 to " + MAX_DIMS + " allowed)");
            }
            long[] dims = new long[(int) nDims];
            long count = 1;
            for (int i = 0; i < nDims; i++) {
                dims[i] = u64("dimension " + i + " of tensor " + name);
                if (dims[i] < 0) {
                    throw new EdgeLmException(where + ": dimension " + i + " = " + Long.toUnsignedString(dims[i]) + " is too large");
                }
                try {
                    count = Math.multiplyExact(count, dims[i]);
                } catch (ArithmeticException e) {
                    throw new EdgeLmException(where + ": dimensions " + java.util.Arrays.toString(dims) + " overflow");
                }
            }
            long typeId = u32("type of tensor " + name);
            GgmlType type = GgmlType.byId((int) Math.min(typeId, Integer.MAX_VALUE));
            if (type == null) {
                throw new EdgeLmException(where + " has unknown ggml type id " + typeId);
            }
            if (dims[0] % type.blockSize() != 0) {
                throw new EdgeLmException(where + ": row length " + dims[0] + " is not a multiple of the " + type
                        + " block size " + type.blockSize());
            }
            if (count / type.blockSize() > Long.MAX_VALUE / type.typeSize()) {
                throw new EdgeLmException(where + ": " + count + " elements of " + type + " overflow");
            }
            long offset = u64("data offset of tensor " + name);
            return new GgufTensorInfo(name, dims, type, offset);
        }
    }

    public String source() {
        return source;
    }

    public int version() {
        return version;
    }

    public GgufMetadata metadata() {
        return metadata;
    }

    /** Tensor infos in file order. */
    public Map<String, GgufTensorInfo> tensorInfos() {
        return tensorInfos;
    }

    public int alignment() {
        return alignment;
    }

    /** File offset of the data section. */
    public long dataOffset() {
        return dataOffset;
    }

    public long fileSize() {
        return file.byteSize();
    }

    /** The tensor named {@code name}, or null. */
    public GgufTensor tensor(String name) {
        GgufTensorInfo info = tensorInfos.get(name);
        return info == null ? null : tensor(info);
    }

    public GgufTensor tensor(GgufTensorInfo info) {
        return new GgufTensor(info, file.asSlice(dataOffset + info.offset(), info.byteSize()), source);
    }

    public List<GgufTensor> tensors() {
        List<GgufTensor> out = new ArrayList<>();
        for (GgufTensorInfo info : tensorInfos.values()) {
            out.add(tensor(info));
        }
        return out;
    }

    @Override
    public void close() {
        if (arena != null) {
            arena.close();
        }
    }
}
