package dev.edgelm.tensor.quant;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.edgelm.tensor.BF16Matrix;
import dev.edgelm.tensor.F16Matrix;
import dev.edgelm.tensor.F32Matrix;
import dev.edgelm.tensor.GgmlType;
import dev.edgelm.util.EdgeLmException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import org.junit.jupiter.api.Test;

class GgmlMatricesTest {
    private static MemorySegment bytes(long n) {
        return Arena.ofAuto().allocate(n);
    }

    @Test
    void mapsEveryTypeToItsKernel() {
        assertInstanceOf(F32Matrix.class, GgmlMatrices.create(GgmlType.F32, bytes(2 * 4 * 4), 2, 4));
        assertInstanceOf(F16Matrix.class, GgmlMatrices.create(GgmlType.F16, bytes(2 * 4 * 2), 2, 4));
        assertInstanceOf(BF16Matrix.class, GgmlMatrices.create(GgmlType.BF16, bytes(2 * 4 * 2), 2, 4));
        assertInstanceOf(Q8_0Matrix.class, GgmlMatrices.create(GgmlType.Q8_0, bytes(2 * 2 * 34), 2, 64));
        assertInstanceOf(Q4_0Matrix.class, GgmlMatrices.create(GgmlType.Q4_0, bytes(2 * 18), 2, 32));
        assertInstanceOf(Q4_1Matrix.class, GgmlMatrices.create(GgmlType.Q4_1, bytes(2 * 20), 2, 32));
        assertInstanceOf(Q5_0Matrix.class, GgmlMatrices.create(GgmlType.Q5_0, bytes(2 * 22), 2, 32));
        assertInstanceOf(Q5_1Matrix.class, GgmlMatrices.create(GgmlType.Q5_1, bytes(2 * 24), 2, 32));
        assertInstanceOf(Q2_KMatrix.class, GgmlMatrices.create(GgmlType.Q2_K, bytes(84), 1, 256));
        assertInstanceOf(Q3_KMatrix.class, GgmlMatrices.create(GgmlType.Q3_K, bytes(110), 1, 256));
        assertInstanceOf(Q4_KMatrix.class, GgmlMatrices.create(GgmlType.Q4_K, bytes(144), 1, 256));
        assertInstanceOf(Q5_KMatrix.class, GgmlMatrices.create(GgmlType.Q5_K, bytes(176), 1, 256));
        assertInstanceOf(Q6_KMatrix.class, GgmlMatrices.create(GgmlType.Q6_K, bytes(210), 1, 256));
        assertEquals("Q6_K[1, 256]", GgmlMatrices.create(GgmlType.Q6_K, bytes(210), 1, 256).toString());
    }

    @Test
    void unsupportedTypeIsNamed() {
        EdgeLmException e = assertThrows(EdgeLmException.class,
                () -> GgmlMatrices.create(GgmlType.IQ2_XS, bytes(74), 1, 256, "tensor blk.0.ffn_up.weight"));
        assertEquals("tensor blk.0.ffn_up.weight has type IQ2_XS, which EdgeLM cannot compute with (supported: F32, F16, "
                + "Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, BF16)", e.getMessage());
    }

    @Test
    void rowsMustBeWholeBlocks() {
        EdgeLmException e = assertThrows(EdgeLmException.class,
                () -> GgmlMatrices.create(GgmlType.Q4_K, bytes(144), 1, 128, "tensor output.weight"));
        assertTrue(e.getMessage().contains("output.weight") && e.getMessage().contains("blocks of 256"), e.getMessage());
        assertThrows(EdgeLmException.class, () -> new Q8_0Matrix(bytes(34), 1, 33));
    }

    @Test
    void byteSizeMustMatchShape() {
        EdgeLmException e = assertThrows(EdgeLmException.class,
                () -> GgmlMatrices.create(GgmlType.Q8_0, bytes(34 * 3), 2, 64, "tensor token_embd.weight"));
        assertTrue(e.getMessage().contains("token_embd.weight") && e.getMessage().contains("136")
                && e.getMessage().contains("102"), e.getMessage());
        assertThrows(EdgeLmException.class, () -> GgmlMatrices.create(GgmlType.BF16, bytes(7), 2, 2));
    }
}
