package dev.edgelm.tensor.quant;

import dev.edgelm.tensor.GgmlType;
import java.io.IOException;
import java.io.InputStream;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Just enough of GGUF v3 to find tensors in the test fixtures: header, metadata (skipped, except
 * {@code general.alignment}), tensor infos, aligned data section. Test-only; not a validating reader.
 */
final class GgufTensors {
    record Tensor(String name, GgmlType type, long[] dims, MemorySegment data) {
        /** ggml dims are innermost first: dims[0] is the row length. */
        int cols() {
            return (int) dims[0];
        }

        int rows() {
            long n = 1;
            for (int i = 1; i < dims.length; i++) {
                n *= dims[i];
            }
            return (int) n;
        }
    }

    final Map<String, Tensor> tensors = new LinkedHashMap<>();

    static GgufTensors load(String resource) throws IOException {
        byte[] bytes;
        try (InputStream in = GgufTensors.class.getResourceAsStream(resource)) {
            if (in == null) {
                throw new IOException("missing test resource " + resource);
            }
            bytes = in.readAllBytes();
        }
        return new GgufTensors(bytes);
    }

    private GgufTensors(byte[] bytes) {
        ByteBuffer b = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
        if (b.getInt() != 0x46554747) {
            throw new IllegalArgumentException("not a GGUF file");
        }
        if (b.getInt() != 3) {
            throw new IllegalArgumentException("not GGUF v3");
        }
        long tensorCount = b.getLong();
        long kvCount = b.getLong();
        long alignment = 32;
        for (long i = 0; i < kvCount; i++) {
            String key = string(b);
            int type = b.getInt();
            if (key.equals("general.alignment")) {
                alignment = b.getInt() & 0xFFFFFFFFL;
            } else {
                skipValue(b, type);
            }
        }
        record Info(String name, long[] dims, GgmlType type, long offset) {}
        Info[] infos = new Info[(int) tensorCount];
        for (int i = 0; i < tensorCount; i++) {
            String name = string(b);
            long[] dims = new long[b.getInt()];
            for (int d = 0; d < dims.length; d++) {
                dims[d] = b.getLong();
            }
            GgmlType type = GgmlType.byId(b.getInt());
            infos[i] = new Info(name, dims, type, b.getLong());
        }
        long dataStart = (b.position() + alignment - 1) / alignment * alignment;
        // a native copy, as the kernels will see a mapped file
        MemorySegment all = Arena.ofAuto().allocate(bytes.length, 64);
        MemorySegment.copy(MemorySegment.ofArray(bytes), 0, all, 0, bytes.length);
        for (Info info : infos) {
            long n = 1;
            for (long d : info.dims) {
                n *= d;
            }
            long size = info.type.byteSize(n);
            tensors.put(info.name, new Tensor(info.name, info.type, info.dims,
                    all.asSlice(dataStart + info.offset, size)));
        }
    }

    Tensor get(String name) {
        Tensor t = tensors.get(name);
        if (t == null) {
            throw new IllegalArgumentException("no tensor " + name);
        }
        return t;
    }

    private static String string(ByteBuffer b) {
        byte[] s = new byte[(int) b.getLong()];
        b.get(s);
        return new String(s, StandardCharsets.UTF_8);
    }

    private static void skipValue(ByteBuffer b, int type) {
        switch (type) {
            case 0, 1, 7 -> b.position(b.position() + 1);
            case 2, 3 -> b.position(b.position() + 2);
            case 4, 5, 6 -> b.position(b.position() + 4);
            case 10, 11, 12 -> b.position(b.position() + 8);
            case 8 -> string(b);
            case 9 -> {
                int elementType = b.getInt();
                long count = b.getLong();
                for (long i = 0; i < count; i++) {
                    skipValue(b, elementType);
                }
            }
            default -> throw new IllegalArgumentException("unknown GGUF value type " + type);
        }
    }
}
