package dev.edgelm.format.gguf;

import dev.edgelm.util.EdgeLmException;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/**
 * The key/value metadata of a GGUF file in file order, with typed look-ups whose errors name the file
 * and key. Integer look-ups accept any integer type (writers disagree on u32 versus i32).
 */
public final class GgufMetadata {
    private final Map<String, GgufValue> values;
    private final String source;

    public GgufMetadata(Map<String, GgufValue> values, String source) {
        this.values = Collections.unmodifiableMap(new LinkedHashMap<>(values));
        this.source = source;
    }

    /** The file the metadata came from, as error messages name it. */
    public String source() {
        return source;
    }

    public Map<String, GgufValue> asMap() {
        return values;
    }

    private GgufValue require(String key, String what) {
        GgufValue v = values.get(key);
        if (v == null) {
            throw new EdgeLmException(source + ": missing metadata key '" + key + "' (" + what + ")");
        }
        return v;
    }

    private EdgeLmException wrongType(String key, GgufValue v, String what) {
        return new EdgeLmException(source + ": metadata key '" + key + "' is " + v.describeType() + ", expected " + what);
    }

    public long requireLong(String key) {
        GgufValue v = require(key, "an integer");
        if (v.isArray() || !v.type().isInteger()) {
            throw wrongType(key, v, "an integer");
        }
        try {
            return v.asLong();
        } catch (ArithmeticException e) {
            throw new EdgeLmException(source + ": metadata key '" + key + "': " + e.getMessage());
        }
    }

    /** A positive int, the usual shape of a hyper-parameter. */
    public int requirePositiveInt(String key) {
        long v = requireLong(key);
        if (v <= 0 || v > Integer.MAX_VALUE) {
            throw new EdgeLmException(source + ": metadata key '" + key + "' = " + v + " is not a positive 32-bit integer");
        }
        return (int) v;
    }

    public Optional<Long> optLong(String key) {
        return values.containsKey(key) ? Optional.of(requireLong(key)) : Optional.empty();
    }

    public double requireDouble(String key) {
        GgufValue v = require(key, "a number");
        if (v.isArray() || !(v.type().isInteger() || v.type() == GgufValueType.FLOAT32 || v.type() == GgufValueType.FLOAT64)) {
            throw wrongType(key, v, "a number");
        }
        return v.asDouble();
    }

    public Optional<Double> optDouble(String key) {
        return values.containsKey(key) ? Optional.of(requireDouble(key)) : Optional.empty();
    }

    public Optional<Boolean> optBoolean(String key) {
        GgufValue v = values.get(key);
        if (v == null) {
            return Optional.empty();
        }
        if (v.type() != GgufValueType.BOOL) {
            throw wrongType(key, v, "a bool");
        }
        return Optional.of(v.asBoolean());
    }

    public String requireString(String key) {
        GgufValue v = require(key, "a string");
        if (v.type() != GgufValueType.STRING) {
            throw wrongType(key, v, "a string");
        }
        return v.asString();
    }

    public Optional<String> optString(String key) {
        return values.containsKey(key) ? Optional.of(requireString(key)) : Optional.empty();
    }

    public Optional<String[]> optStringArray(String key) {
        GgufValue v = values.get(key);
        if (v == null) {
            return Optional.empty();
        }
        if (!v.isArray() || v.elementType() != GgufValueType.STRING) {
            throw wrongType(key, v, "an array of strings");
        }
        return Optional.of(v.strings());
    }

    /** An integer array as ints (each element must fit). */
    public Optional<int[]> optIntArray(String key) {
        GgufValue v = values.get(key);
        if (v == null) {
            return Optional.empty();
        }
        if (!v.isArray() || !v.elementType().isInteger()) {
            throw wrongType(key, v, "an array of integers");
        }
        long[] raw = v.longs();
        int[] out = new int[raw.length];
        for (int i = 0; i < raw.length; i++) {
            if (raw[i] < Integer.MIN_VALUE || raw[i] > Integer.MAX_VALUE) {
                throw new EdgeLmException(source + ": metadata key '" + key + "'[" + i + "] = " + raw[i] + " does not fit 32 bits");
            }
            out[i] = (int) raw[i];
        }
        return Optional.of(out);
    }
}
