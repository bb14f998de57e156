package dev.edgelm.format.gguf;

import dev.edgelm.tensor.GgmlType;
import dev.edgelm.util.EdgeLmException;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The ggml type of each tensor of a GGUF file, read from its header while stepping over the metadata values
 * without decoding them (a vocabulary of 248,320 strings is skipped by its lengths).
 *
 * <p>Why beside {@link GgufFile}: start-up needs the tensor types early, on another thread, while the main
 * thread reads the same header in full for the tokenizer; decoding the metadata twice would cost that thread a
 * second of the two cores. Nothing is validated beyond what this read needs: {@link GgufFile#open} is the
 * reader that checks a file and reports its faults.
 */
public final class GgufTensorTypes {
    private static final ValueLayout.OfInt U32 = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfLong U64 = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    /** Bytes of the fixed-size GGUF value types by id (0 = not fixed-size: string 8, array 9, or unknown). */
    private static final int[] FIXED_SIZE = {1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8};
    private static final int STRING = 8;
    private static final int ARRAY = 9;

    private GgufTensorTypes() {}

    /**
     * Tensor name to type, in file order; a type id this build does not know maps to null. A file that is not
     * a GGUF or whose header is cut or lies is an {@link EdgeLmException} naming the file.
     */
    public static Map<String, GgmlType> read(Path path) {
        try (Arena arena = Arena.ofConfined(); FileChannel ch = FileChannel.open(path, StandardOpenOption.READ)) {
            MemorySegment seg = ch.map(FileChannel.MapMode.READ_ONLY, 0, ch.size(), arena);
            return read(seg);
        } catch (IOException e) {
            throw new EdgeLmException(path + ": cannot read: " + e.getMessage(), e);
        } catch (RuntimeException | InternalError e) { // out of bounds, a lying count, a file cut while mapped (SIGBUS)
            throw new EdgeLmException(path + ": the GGUF header is cut short or malformed", e);
        }
    }

    /** Longest tensor name accepted (ggml's own limit is 64 bytes; names are short ASCII). */
    private static final int MAX_NAME = 4096;

    static Map<String, GgmlType> read(MemorySegment seg) {
        long pos = 0;
        if (seg.get(U32, pos) != GgufFile.MAGIC) {
            throw new IllegalArgumentException("no GGUF magic");
        }
        int version = seg.get(U32, pos + 4);
        if (version != 2 && version != 3) {
            throw new IllegalArgumentException("GGUF version " + version);
        }
        long size = seg.byteSize();
        long tensors = count(seg.get(U64, pos + 8), size, 24);
        long kvs = count(seg.get(U64, pos + 16), size, 13);
        pos = 24;
        for (long i = 0; i < kvs; i++) {
            pos = skipString(seg, pos);
            int type = seg.get(U32, pos);
            pos = skipValue(seg, pos + 4, type, 0);
        }
        Map<String, GgmlType> types = new LinkedHashMap<>();
        for (long i = 0; i < tensors; i++) {
            long len = seg.get(U64, pos);
            if (len < 0 || len > MAX_NAME) {
                throw new IllegalArgumentException("tensor name of " + Long.toUnsignedString(len) + " bytes");
            }
            byte[] name = seg.asSlice(pos + 8, len).toArray(ValueLayout.JAVA_BYTE);
            pos += 8 + len;
            int dims = seg.get(U32, pos);
            if (dims < 0 || dims > GgufFile.MAX_DIMS) {
                throw new IllegalArgumentException(dims + " dimensions");
            }
            pos += 4 + 8L * dims;
            int type = seg.get(U32, pos);
            pos += 4 + 8; // the type, then the data offset
            types.put(new String(name, StandardCharsets.UTF_8), GgmlType.byId(type));
        }
        return types;
    }

    private static long skipString(MemorySegment seg, long pos) {
        long len = count(seg.get(U64, pos), seg.byteSize(), 1);
        return pos + 8 + len;
    }

    /** How deep arrays of arrays may nest: {@link GgufFile}'s limit, so that both readers accept the same files. */
    private static final int MAX_NESTING = 8;

    private static long skipValue(MemorySegment seg, long pos, int type, int depth) {
        if (type == STRING) {
            return skipString(seg, pos);
        }
        if (type == ARRAY) {
            if (depth >= MAX_NESTING) {
                throw new IllegalArgumentException("arrays nested deeper than " + MAX_NESTING);
            }
            int elementType = seg.get(U32, pos);
            long n = seg.get(U64, pos + 4);
            pos += 12;
            if (elementType == STRING || elementType == ARRAY) { // each element carries its own length
                count(n, seg.byteSize(), elementType == STRING ? 8 : 12);
                for (long i = 0; i < n; i++) {
                    pos = skipValue(seg, pos, elementType, depth + 1);
                }
                return pos;
            }
            int each = fixedSize(elementType);
            return pos + count(n, seg.byteSize(), each) * each;
        }
        return pos + fixedSize(type);
    }

    private static int fixedSize(int type) {
        int s = type >= 0 && type < FIXED_SIZE.length ? FIXED_SIZE[type] : 0;
        if (s == 0) {
            throw new IllegalArgumentException("value type " + type);
        }
        return s;
    }

    /** A count from the header that cannot be larger than the file allows ({@code each} bytes per item at least). */
    private static long count(long n, long fileSize, int each) {
        if (n < 0 || n > fileSize / each) {
            throw new IllegalArgumentException("count " + Long.toUnsignedString(n));
        }
        return n;
    }
}
