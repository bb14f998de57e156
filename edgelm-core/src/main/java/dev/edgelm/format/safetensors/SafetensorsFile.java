package dev.edgelm.format.safetensors;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.edgelm.tensor.TensorView;
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
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * One {@code .safetensors} file, memory-mapped. Layout: an 8-byte little-endian header length N, N bytes
 * of JSON ({@code name -> {dtype, shape, data_offsets: [begin, end]}} plus an optional
 * {@code __metadata__}), then the data section that the offsets are relative to.
 *
 * <p>Everything in the header is validated against the file before any tensor is used: a corrupt or
 * truncated file is an {@link EdgeLmException} naming the file and tensor, never an out-of-bounds read.
 */
public final class SafetensorsFile implements AutoCloseable {
    /** Element sizes of every dtype the format defines; only F32/BF16/F16 can be computed with. */
    private static final Map<String, Integer> DTYPE_BYTES = Map.ofEntries(
            Map.entry("F64", 8), Map.entry("F32", 4), Map.entry("F16", 2), Map.entry("BF16", 2),
            Map.entry("I64", 8), Map.entry("U64", 8), Map.entry("I32", 4), Map.entry("U32", 4),
            Map.entry("I16", 2), Map.entry("U16", 2), Map.entry("I8", 1), Map.entry("U8", 1),
            Map.entry("BOOL", 1), Map.entry("F8_E4M3", 1), Map.entry("F8_E5M2", 1));
    private static final long MAX_HEADER_BYTES = 256L << 20;

    private final Arena arena;
    private final Map<String, TensorView> tensors;

    private SafetensorsFile(Arena arena, Map<String, TensorView> tensors) {
        this.arena = arena;
        this.tensors = tensors;
    }

    public static SafetensorsFile open(Path path) {
        Arena arena = Arena.ofShared();
        try {
            MemorySegment file;
            try (FileChannel ch = FileChannel.open(path, StandardOpenOption.READ)) {
                file = ch.map(FileChannel.MapMode.READ_ONLY, 0, ch.size(), arena);
            }
            Map<String, TensorView> tensors = parse(path, file);
            return new SafetensorsFile(arena, tensors);
        } catch (IOException e) {
            arena.close();
            throw new EdgeLmException(path + ": cannot read: " + e.getMessage(), e);
        } catch (RuntimeException e) {
            arena.close();
            throw e;
        }
    }

    static Map<String, TensorView> parse(Path path, MemorySegment file) {
        String src = path.toString();
        long size = file.byteSize();
        if (size < 8) {
            throw new EdgeLmException(src + ": not a safetensors file (" + size + " bytes, shorter than the 8-byte header length)");
        }
        long headerLen = file.get(ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN), 0);
        if (headerLen < 2 || headerLen > size - 8) {
            throw new EdgeLmException(src + ": header length " + Long.toUnsignedString(headerLen)
                    + " runs past the end of the file (" + size + " bytes)");
        }
        if (headerLen > MAX_HEADER_BYTES) {
            throw new EdgeLmException(src + ": header length " + headerLen + " is implausibly large");
        }
        byte[] headerBytes = file.asSlice(8, headerLen).toArray(ValueLayout.JAVA_BYTE);
        JsonNode header;
        try {
            header = new ObjectMapper().readTree(new String(headerBytes, StandardCharsets.UTF_8).trim());
        } catch (JsonProcessingException e) {
            throw new EdgeLmException(src + ": malformed JSON header: " + e.getOriginalMessage());
        }
        if (header == null || !header.isObject()) {
            throw new EdgeLmException(src + ": header is not a JSON object");
        }
        long dataStart = 8 + headerLen;
        long dataSize = size - dataStart;
        record Span(String name, long begin, long end) {}
        List<Span> spans = new ArrayList<>();
        Map<String, TensorView> out = new LinkedHashMap<>();
        for (Iterator<Map.Entry<String, JsonNode>> it = header.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> e = it.next();
            String name = e.getKey();
            if (name.equals("__metadata__")) {
                continue;
            }
            JsonNode info = e.getValue();
            String where = src + ": tensor " + name;
            if (!info.isObject()) {
                throw new EdgeLmException(where + ": entry is not an object");
            }
            JsonNode dtypeNode = info.get("dtype");
            JsonNode shapeNode = info.get("shape");
            JsonNode offsetsNode = info.get("data_offsets");
            if (dtypeNode == null || !dtypeNode.isTextual()) {
                throw new EdgeLmException(where + ": missing or non-string field 'dtype'");
            }
            if (shapeNode == null || !shapeNode.isArray()) {
                throw new EdgeLmException(where + ": missing or non-array field 'shape'");
            }
            if (offsetsNode == null || !offsetsNode.isArray() || offsetsNode.size() != 2
                    || !offsetsNode.get(0).canConvertToLong() || !offsetsNode.get(1).canConvertToLong()) {
                throw new EdgeLmException(where + ": field 'data_offsets' must be [begin, end]");
            }
            String dtype = dtypeNode.asText();
            Integer elemBytes = DTYPE_BYTES.get(dtype);
            if (elemBytes == null) {
                throw new EdgeLmException(where + ": unknown dtype '" + dtype + "'");
            }
            long[] shape = new long[shapeNode.size()];
            long count = 1;
            for (int i = 0; i < shape.length; i++) {
                JsonNode d = shapeNode.get(i);
                if (!d.canConvertToLong() || d.asLong() < 0) {
                    throw new EdgeLmException(where + ": shape " + shapeNode + " has an invalid dimension");
                }
                shape[i] = d.asLong();
                try {
                    count = Math.multiplyExact(count, shape[i]);
                } catch (ArithmeticException ex) {
                    throw new EdgeLmException(where + ": shape " + shapeNode + " overflows");
                }
            }
            long begin = offsetsNode.get(0).asLong();
            long end = offsetsNode.get(1).asLong();
            if (begin < 0 || end < begin || end > dataSize) {
                throw new EdgeLmException(where + ": data_offsets [" + begin + ", " + end
                        + "] are out of bounds of the data section (" + dataSize + " bytes)");
            }
            long expected;
            try {
                expected = Math.multiplyExact(count, (long) elemBytes);
            } catch (ArithmeticException ex) {
                throw new EdgeLmException(where + ": shape " + shapeNode + " overflows");
            }
            if (end - begin != expected) {
                throw new EdgeLmException(where + ": holds " + (end - begin) + " bytes but dtype " + dtype
                        + " x shape " + shapeNode + " needs " + expected);
            }
            spans.add(new Span(name, begin, end));
            out.put(name, new TensorView(name, dtype, shape, file.asSlice(dataStart + begin, end - begin), src));
        }
        spans.sort(Comparator.comparingLong(Span::begin).thenComparingLong(Span::end));
        for (int i = 1; i < spans.size(); i++) {
            Span prev = spans.get(i - 1);
            Span cur = spans.get(i);
            if (cur.begin < prev.end) {
                throw new EdgeLmException(src + ": tensors " + prev.name + " and " + cur.name + " overlap (bytes "
                        + prev.begin + ".." + prev.end + " and " + cur.begin + ".." + cur.end + ")");
            }
        }
        return Collections.unmodifiableMap(out);
    }

    public Map<String, TensorView> tensors() {
        return tensors;
    }

    @Override
    public void close() {
        arena.close();
    }
}
