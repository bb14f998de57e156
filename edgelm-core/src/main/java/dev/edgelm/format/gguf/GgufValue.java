package dev.edgelm.format.gguf;

import java.util.Arrays;
import java.util.Objects;

/**
 * One typed GGUF metadata value. The type is kept exactly (a u32 stays a u32) so that a file read and
 * written again is byte-identical.
 *
 * <p>Storage: every integer scalar is a {@code long} (u64 keeps its raw bits); f32 a {@code Float}, f64 a
 * {@code Double}, bool a {@code Boolean}, string a {@code String}. Arrays hold one Java array: {@code long[]}
 * for every integer element type, {@code float[]}, {@code double[]}, {@code boolean[]}, {@code String[]},
 * or {@code GgufValue[]} of ARRAY values for nested arrays.
 */
public final class GgufValue {
    private final GgufValueType type;
    private final GgufValueType elementType;
    private final Object value;

    private GgufValue(GgufValueType type, GgufValueType elementType, Object value) {
        this.type = type;
        this.elementType = elementType;
        this.value = value;
    }

    public static GgufValue u8(int v) {
        return integer(GgufValueType.UINT8, v);
    }

    public static GgufValue i8(int v) {
        return integer(GgufValueType.INT8, v);
    }

    public static GgufValue u16(int v) {
        return integer(GgufValueType.UINT16, v);
    }

    public static GgufValue i16(int v) {
        return integer(GgufValueType.INT16, v);
    }

    public static GgufValue u32(long v) {
        return integer(GgufValueType.UINT32, v);
    }

    public static GgufValue i32(int v) {
        return integer(GgufValueType.INT32, v);
    }

    public static GgufValue u64(long rawBits) {
        return integer(GgufValueType.UINT64, rawBits);
    }

    public static GgufValue i64(long v) {
        return integer(GgufValueType.INT64, v);
    }

    public static GgufValue f32(float v) {
        return new GgufValue(GgufValueType.FLOAT32, null, v);
    }

    public static GgufValue f64(double v) {
        return new GgufValue(GgufValueType.FLOAT64, null, v);
    }

    public static GgufValue bool(boolean v) {
        return new GgufValue(GgufValueType.BOOL, null, v);
    }

    public static GgufValue string(String v) {
        return new GgufValue(GgufValueType.STRING, null, Objects.requireNonNull(v));
    }

    /** An integer scalar of an integer type; the value must fit the type. */
    public static GgufValue integer(GgufValueType type, long v) {
        checkInteger(type, v);
        return new GgufValue(type, null, v);
    }

    /** An array of an integer element type. */
    public static GgufValue integerArray(GgufValueType elementType, long[] values) {
        for (long v : values) {
            checkInteger(elementType, v);
        }
        return new GgufValue(GgufValueType.ARRAY, elementType, values.clone());
    }

    public static GgufValue i32Array(int[] values) {
        return integerArray(GgufValueType.INT32, Arrays.stream(values).asLongStream().toArray());
    }

    public static GgufValue f32Array(float[] values) {
        return new GgufValue(GgufValueType.ARRAY, GgufValueType.FLOAT32, values.clone());
    }

    public static GgufValue f64Array(double[] values) {
        return new GgufValue(GgufValueType.ARRAY, GgufValueType.FLOAT64, values.clone());
    }

    public static GgufValue boolArray(boolean[] values) {
        return new GgufValue(GgufValueType.ARRAY, GgufValueType.BOOL, values.clone());
    }

    public static GgufValue stringArray(String[] values) {
        for (String s : values) {
            Objects.requireNonNull(s);
        }
        return new GgufValue(GgufValueType.ARRAY, GgufValueType.STRING, values.clone());
    }

    /** An array of arrays; every element must itself be an ARRAY value. */
    public static GgufValue nestedArray(GgufValue[] arrays) {
        for (GgufValue v : arrays) {
            if (v.type != GgufValueType.ARRAY) {
                throw new IllegalArgumentException("a nested array holds arrays, got " + v.type);
            }
        }
        return new GgufValue(GgufValueType.ARRAY, GgufValueType.ARRAY, arrays.clone());
    }

    /** Wraps a Java array the reader built, without copying. */
    static GgufValue arrayOf(GgufValueType elementType, Object javaArray) {
        return new GgufValue(GgufValueType.ARRAY, elementType, javaArray);
    }

    static GgufValue scalarOf(GgufValueType type, Object boxed) {
        return new GgufValue(type, null, boxed);
    }

    private static void checkInteger(GgufValueType type, long v) {
        boolean ok = switch (type) {
            case UINT8 -> v >= 0 && v <= 0xFF;
            case INT8 -> v >= Byte.MIN_VALUE && v <= Byte.MAX_VALUE;
            case UINT16 -> v >= 0 && v <= 0xFFFF;
            case INT16 -> v >= Short.MIN_VALUE && v <= Short.MAX_VALUE;
            case UINT32 -> v >= 0 && v <= 0xFFFF_FFFFL;
            case INT32 -> v >= Integer.MIN_VALUE && v <= Integer.MAX_VALUE;
            case UINT64, INT64 -> true;
            default -> throw new IllegalArgumentException(type + " is not an integer type");
        };
        if (!ok) {
            throw new IllegalArgumentException(v + " does not fit " + type);
        }
    }

    public GgufValueType type() {
        return type;
    }

    /** The element type of an array; null for a scalar. */
    public GgufValueType elementType() {
        return elementType;
    }

    public boolean isArray() {
        return type == GgufValueType.ARRAY;
    }

    /** Integer scalar as a signed long (a u64 above 2^63-1 is reported as too large). */
    public long asLong() {
        if (!type.isInteger()) {
            throw new IllegalStateException("not an integer: " + type);
        }
        long v = (Long) value;
        if (type == GgufValueType.UINT64 && v < 0) {
            throw new ArithmeticException("u64 value " + Long.toUnsignedString(v) + " is too large");
        }
        return v;
    }

    /** Raw bits of an integer scalar (u64 unsigned bits as they are). */
    long rawLong() {
        return (Long) value;
    }

    public double asDouble() {
        return switch (type) {
            case FLOAT32 -> (Float) value;
            case FLOAT64 -> (Double) value;
            default -> asLong();
        };
    }

    public boolean asBoolean() {
        if (type != GgufValueType.BOOL) {
            throw new IllegalStateException("not a bool: " + type);
        }
        return (Boolean) value;
    }

    public String asString() {
        if (type != GgufValueType.STRING) {
            throw new IllegalStateException("not a string: " + type);
        }
        return (String) value;
    }

    public int length() {
        if (!isArray()) {
            throw new IllegalStateException("not an array: " + type);
        }
        return java.lang.reflect.Array.getLength(value);
    }

    /** The elements of an integer array (raw bits for u64). */
    public long[] longs() {
        requireArray(elementType != null && elementType.isInteger(), "integer");
        return ((long[]) value).clone();
    }

    /** The elements of a float32 array. */
    public float[] floats() {
        requireArray(elementType == GgufValueType.FLOAT32, "f32");
        return ((float[]) value).clone();
    }

    public String[] strings() {
        requireArray(elementType == GgufValueType.STRING, "string");
        return ((String[]) value).clone();
    }

    /** The stored Java object without a defensive copy (for the writer). */
    Object raw() {
        return value;
    }

    private void requireArray(boolean ok, String what) {
        if (!isArray() || !ok) {
            throw new IllegalStateException("not an array of " + what + ": " + describeType());
        }
    }

    /** e.g. "u32" or "array[string]". */
    public String describeType() {
        return isArray() ? "array[" + typeName(elementType) + "]" : typeName(type);
    }

    private static String typeName(GgufValueType t) {
        return switch (t) {
            case UINT8 -> "u8";
            case INT8 -> "i8";
            case UINT16 -> "u16";
            case INT16 -> "i16";
            case UINT32 -> "u32";
            case INT32 -> "i32";
            case UINT64 -> "u64";
            case INT64 -> "i64";
            case FLOAT32 -> "f32";
            case FLOAT64 -> "f64";
            case BOOL -> "bool";
            case STRING -> "string";
            case ARRAY -> "array";
        };
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof GgufValue v && type == v.type && elementType == v.elementType
                && Objects.deepEquals(value, v.value);
    }

    @Override
    public int hashCode() {
        return Objects.hash(type, elementType, Arrays.deepHashCode(new Object[] {value}));
    }

    @Override
    public String toString() {
        if (!isArray()) {
            return type == GgufValueType.UINT64 ? Long.toUnsignedString((Long) value) : String.valueOf(value);
        }
        return describeType() + " of " + length();
    }
}
