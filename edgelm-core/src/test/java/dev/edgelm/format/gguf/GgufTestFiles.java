package dev.edgelm.format.gguf;

import dev.edgelm.tensor.GgmlType;
import java.io.IOException;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Builders for small GGUF files used by the format tests. */
final class GgufTestFiles {
    private GgufTestFiles() {}

    /** Metadata holding every value type, edge values and nested arrays. */
    static Map<String, GgufValue> everyType() {
        Map<String, GgufValue> m = new LinkedHashMap<>();
        m.put("general.architecture", GgufValue.string("test"));
        m.put("t.u8", GgufValue.u8(255));
        m.put("t.i8", GgufValue.i8(-128));
        m.put("t.u16", GgufValue.u16(65535));
        m.put("t.i16", GgufValue.i16(-32768));
        m.put("t.u32", GgufValue.u32(4_000_000_000L));
        m.put("t.i32", GgufValue.i32(-123456789));
        m.put("t.f32", GgufValue.f32(-1.5e-7f));
        m.put("t.bool", GgufValue.bool(true));
        m.put("t.string", GgufValue.string("héllo, 世界 \u0000 end"));
        m.put("t.empty_string", GgufValue.string(""));
        m.put("t.u64", GgufValue.u64(-1L)); // 2^64 - 1
        m.put("t.i64", GgufValue.i64(Long.MIN_VALUE));
        m.put("t.f64", GgufValue.f64(Math.PI));
        m.put("t.arr_u8", GgufValue.integerArray(GgufValueType.UINT8, new long[] {0, 1, 255}));
        m.put("t.arr_i16", GgufValue.integerArray(GgufValueType.INT16, new long[] {-2, 3}));
        m.put("t.arr_i32", GgufValue.i32Array(new int[] {1, -2, 3}));
        m.put("t.arr_u64", GgufValue.integerArray(GgufValueType.UINT64, new long[] {Long.MAX_VALUE, -1}));
        m.put("t.arr_f32", GgufValue.f32Array(new float[] {1f, Float.NaN, -0f}));
        m.put("t.arr_f64", GgufValue.f64Array(new double[] {2.5}));
        m.put("t.arr_bool", GgufValue.boolArray(new boolean[] {true, false, true}));
        m.put("t.arr_string", GgufValue.stringArray(new String[] {"a", "", "Ġthe"}));
        m.put("t.arr_empty", GgufValue.i32Array(new int[0]));
        m.put("t.arr_nested", GgufValue.nestedArray(new GgufValue[] {
                GgufValue.i32Array(new int[] {1, 2}),
                GgufValue.stringArray(new String[] {"x"}),
                GgufValue.nestedArray(new GgufValue[] {GgufValue.f32Array(new float[] {7f})})}));
        return m;
    }

    record Tensor(GgufWriter.TensorSpec spec, byte[] data) {}

    /** An F32 matrix [rows=2, cols=3], a BF16 matrix [rows=2, cols=32] and an F32 vector of 5. */
    static List<Tensor> someTensors() {
        List<Tensor> out = new ArrayList<>();
        out.add(new Tensor(new GgufWriter.TensorSpec("a.weight", new long[] {3, 2}, GgmlType.F32), pattern(24, 1)));
        out.add(new Tensor(new GgufWriter.TensorSpec("b.weight", new long[] {32, 2}, GgmlType.BF16), pattern(128, 7)));
        out.add(new Tensor(new GgufWriter.TensorSpec("c.norm", new long[] {5}, GgmlType.F32), pattern(20, 3)));
        return out;
    }

    static byte[] pattern(int n, int seed) {
        byte[] b = new byte[n];
        for (int i = 0; i < n; i++) {
            b[i] = (byte) (i * 31 + seed);
        }
        return b;
    }

    static void write(Path path, Map<String, GgufValue> metadata, List<Tensor> tensors) {
        try (GgufWriter w = GgufWriter.create(path, metadata, tensors.stream().map(Tensor::spec).toList())) {
            for (Tensor t : tensors) {
                w.write(t.data(), 0, t.data().length);
            }
            w.finish();
        }
    }

    /** Writes {@code src} again: same metadata, same tensors in the same order, same bytes. */
    static void rewrite(GgufFile src, Path path) {
        List<GgufWriter.TensorSpec> specs = new ArrayList<>();
        for (GgufTensorInfo t : src.tensorInfos().values()) {
            specs.add(new GgufWriter.TensorSpec(t.name(), t.dims(), t.type()));
        }
        try (GgufWriter w = GgufWriter.create(path, src.metadata().asMap(), specs)) {
            for (GgufTensor t : src.tensors()) {
                w.write(t.data().toArray(ValueLayout.JAVA_BYTE), 0, (int) t.data().byteSize());
            }
            w.finish();
        }
    }

    static byte[] bytes(Path p) {
        try {
            return java.nio.file.Files.readAllBytes(p);
        } catch (IOException e) {
            throw new AssertionError(e);
        }
    }
}
