package dev.edgelm.format.npy;

import dev.edgelm.util.AtomicFiles;
import dev.edgelm.util.OutputFile;
import dev.edgelm.util.EdgeLmException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * NumPy {@code .npy} format 1.0: magic, version, a little-endian u16 header length, an ASCII dict header
 * padded to 64 bytes, then C-order data. Reads float32/int64/int32 arrays, writes float32 ones.
 */
public final class Npy {
    private static final byte[] MAGIC = {(byte) 0x93, 'N', 'U', 'M', 'P', 'Y'};
    private static final Pattern DESCR = Pattern.compile("'descr':\\s*'([^']+)'");
    private static final Pattern ORDER = Pattern.compile("'fortran_order':\\s*(True|False)");
    private static final Pattern SHAPE = Pattern.compile("'shape':\\s*\\(([^)]*)\\)");

    /** The most elements a Java array can hold. */
    private static final long MAX_ELEMENTS = Integer.MAX_VALUE - 8;

    private Npy() {}

    /** An array read from a file: shape plus data widened to float (floats) or kept as long (ints). */
    public record Array(long[] shape, float[] floats, long[] longs) {
        public int dim(int i) {
            return (int) shape[i];
        }

        public int[] toIntArray() {
            int[] out = new int[longs.length];
            for (int i = 0; i < out.length; i++) {
                if (longs[i] != (int) longs[i]) {
                    throw new EdgeLmException("value " + longs[i] + " at index " + i + " does not fit a 32-bit integer");
                }
                out[i] = (int) longs[i];
            }
            return out;
        }
    }

    public static Array read(Path path) {
        byte[] bytes;
        try {
            bytes = Files.readAllBytes(path);
        } catch (IOException e) {
            throw new EdgeLmException(path + ": cannot read: " + e.getMessage());
        }
        ByteBuffer buf = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
        for (int i = 0; i < MAGIC.length; i++) {
            if (bytes.length < MAGIC.length || bytes[i] != MAGIC[i]) {
                throw new EdgeLmException(path + ": not a .npy file");
            }
        }
        // magic, major and minor version, then the header length: 2 bytes in version 1, 4 in versions 2 and 3
        int lengthBytes = bytes.length > 6 && bytes[6] != 1 ? 4 : 2;
        if (bytes.length < 8 + lengthBytes) {
            throw new EdgeLmException(path + ": truncated .npy header (" + bytes.length + " bytes)");
        }
        long headerLen = lengthBytes == 2 ? Short.toUnsignedInt(buf.getShort(8)) : Integer.toUnsignedLong(buf.getInt(8));
        long dataStart = 8 + lengthBytes + headerLen;
        if (dataStart > bytes.length) {
            throw new EdgeLmException(path + ": truncated .npy header: " + headerLen + " bytes declared, "
                    + (bytes.length - 8 - lengthBytes) + " present");
        }
        String header = new String(bytes, 8 + lengthBytes, (int) headerLen, StandardCharsets.ISO_8859_1);
        Matcher d = DESCR.matcher(header);
        Matcher o = ORDER.matcher(header);
        Matcher s = SHAPE.matcher(header);
        if (!d.find() || !o.find() || !s.find()) {
            throw new EdgeLmException(path + ": malformed .npy header: " + header.trim());
        }
        if (o.group(1).equals("True")) {
            throw new EdgeLmException(path + ": Fortran-order arrays are not supported");
        }
        String dtype = d.group(1);
        int itemBytes = switch (dtype) {
            case "<f4", "<i4" -> 4;
            case "<i8" -> 8;
            default -> throw new EdgeLmException(path + ": unsupported dtype " + dtype);
        };
        long[] shape = shape(s.group(1), path);
        long count = 1;
        for (long dim : shape) { // saturates past MAX_ELEMENTS, so a huge shape cannot overflow
            count = dim == 0 || count == 0 ? 0 : count <= MAX_ELEMENTS / dim ? count * dim : MAX_ELEMENTS + 1;
        }
        if (count > MAX_ELEMENTS) {
            throw new EdgeLmException(path + ": shape (" + s.group(1) + ") holds too many elements for one array");
        }
        long dataBytes = count * itemBytes;
        if (bytes.length - dataStart < dataBytes) {
            throw new EdgeLmException(path + ": truncated: shape (" + s.group(1).trim() + ") of " + dtype + " needs "
                    + dataBytes + " bytes of data, the file has " + (bytes.length - dataStart));
        }
        buf.position((int) dataStart);
        switch (dtype) {
            case "<f4" -> {
                float[] f = new float[(int) count];
                buf.asFloatBuffer().get(f);
                return new Array(shape, f, null);
            }
            case "<i8" -> {
                long[] l = new long[(int) count];
                buf.asLongBuffer().get(l);
                return new Array(shape, null, l);
            }
            default -> { // <i4
                long[] l = new long[(int) count];
                for (int i = 0; i < count; i++) {
                    l[i] = buf.getInt((int) dataStart + 4 * i);
                }
                return new Array(shape, null, l);
            }
        }
    }

    /** The dims of a header's shape tuple, e.g. "2, 3" or "5," or "" (a scalar). */
    private static long[] shape(String tuple, Path path) {
        List<Long> dims = new ArrayList<>();
        for (String dim : tuple.split(",")) {
            if (dim.isBlank()) {
                continue;
            }
            long v;
            try {
                v = Long.parseLong(dim.trim());
            } catch (NumberFormatException e) {
                v = -1;
            }
            if (v < 0) {
                throw new EdgeLmException(path + ": malformed .npy shape (" + tuple + ")");
            }
            dims.add(v);
        }
        return dims.stream().mapToLong(Long::longValue).toArray();
    }

    /** Receives the rows of a streamed array: {@code cols} floats of {@code src} from {@code offset}. */
    @FunctionalInterface
    public interface RowSink {
        void put(float[] src, int offset) throws IOException;
    }

    /** Produces the rows of a streamed array, in order, into the sink. */
    @FunctionalInterface
    public interface RowProducer {
        void produce(RowSink sink) throws IOException;
    }

    /**
     * Streams a float32 array [rows, cols] into {@code out}: the header with the final shape first, then each row
     * as it is produced, so memory stays at one row whatever the count. Through {@link OutputFile}, a regular file
     * appears only when complete; a producer that fails, or gives another number of rows, leaves no file.
     */
    public static void writeFloat32Rows(OutputFile out, long rows, int cols, RowProducer producer) {
        if (rows < 0 || cols < 0) {
            throw new IllegalArgumentException("shape [" + rows + ", " + cols + "]");
        }
        byte[] header = header(new long[] {rows, cols});
        try {
            out.write(stream -> {
                stream.write(header);
                ByteBuffer body = ByteBuffer.allocate(64 * 1024).order(ByteOrder.LITTLE_ENDIAN);
                long[] written = {0};
                producer.produce((src, offset) -> {
                    if (written[0] == rows) {
                        throw new IllegalStateException("more than " + rows + " rows");
                    }
                    for (int i = 0; i < cols; i++) {
                        if (!body.hasRemaining()) {
                            stream.write(body.array(), 0, body.position());
                            body.clear();
                        }
                        body.putFloat(src[offset + i]);
                    }
                    written[0]++;
                });
                stream.write(body.array(), 0, body.position());
                if (written[0] != rows) {
                    throw new IllegalStateException(written[0] + " rows written, " + rows + " announced");
                }
            });
        } catch (IOException e) {
            throw new EdgeLmException(out.path() + ": cannot write: "
                    + (e instanceof java.nio.file.FileSystemException f && f.getReason() != null ? f.getReason() : e.getMessage()));
        }
    }

    /** The magic, version, header length and padded header dict of a little-endian float32 array. */
    private static byte[] header(long[] shape) {
        StringBuilder shapeText = new StringBuilder();
        for (int i = 0; i < shape.length; i++) {
            shapeText.append(shape[i]).append(shape.length == 1 ? "," : i < shape.length - 1 ? ", " : "");
        }
        String dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (" + shapeText + "), }";
        int unpadded = 10 + dict.length() + 1;
        int padding = (64 - unpadded % 64) % 64;
        String text = dict + " ".repeat(padding) + "\n";
        ByteBuffer head = ByteBuffer.allocate(10 + text.length()).order(ByteOrder.LITTLE_ENDIAN);
        head.put(MAGIC).put((byte) 1).put((byte) 0).putShort((short) text.length());
        head.put(text.getBytes(StandardCharsets.ISO_8859_1));
        return head.array();
    }

    /** Writes a float32 array of the given shape, atomically (temporary file, then rename). */
    public static void writeFloat32(Path path, float[] data, long... shape) {
        long count = 1;
        for (long d : shape) {
            count *= d;
        }
        if (count != data.length) {
            throw new IllegalArgumentException("shape does not match data length " + data.length);
        }
        StringBuilder shapeText = new StringBuilder();
        for (int i = 0; i < shape.length; i++) {
            shapeText.append(shape[i]).append(shape.length == 1 ? "," : i < shape.length - 1 ? ", " : "");
        }
        String dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (" + shapeText + "), }";
        int unpadded = 10 + dict.length() + 1;
        int padding = (64 - unpadded % 64) % 64;
        String header = dict + " ".repeat(padding) + "\n";
        try {
            AtomicFiles.write(path, out -> {
                ByteBuffer head = ByteBuffer.allocate(10).order(ByteOrder.LITTLE_ENDIAN);
                head.put(MAGIC).put((byte) 1).put((byte) 0).putShort((short) header.length());
                out.write(head.array());
                out.write(header.getBytes(StandardCharsets.ISO_8859_1));
                ByteBuffer body = ByteBuffer.allocate(64 * 1024).order(ByteOrder.LITTLE_ENDIAN);
                for (float v : data) {
                    if (!body.hasRemaining()) {
                        out.write(body.array(), 0, body.position());
                        body.clear();
                    }
                    body.putFloat(v);
                }
                out.write(body.array(), 0, body.position());
            });
        } catch (IOException e) {
            throw new EdgeLmException(path + ": cannot write: " + e.getMessage());
        }
    }
}
