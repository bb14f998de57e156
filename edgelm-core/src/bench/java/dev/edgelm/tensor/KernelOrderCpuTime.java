package dev.edgelm.tensor;

import dev.edgelm.tensor.quant.MatVecCpuTime;

/**
 * Kernel benchmarks run one after the other in one JVM, to see how a kernel's compiled speed depends on what ran
 * before it (the Vector API's shared implementation methods carry shared type profiles; docs/lab/kquant-decode.md).
 * Each argument is a step: {@code gemm:TYPE:ROWSxCOLSxTOKENS[:KERNELS]} runs {@link GemmCpuTime} (kernels as its
 * {@code -Dkernels}, default {@code own}), {@code mv:ROWS:COLS:TYPE[,TYPE...]} runs {@link MatVecCpuTime}. E.g.
 * {@code gemm:Q4_0:256x1024x64 mv:16384:1024:Q6_K,Q4_K,Q5_K} (after the Q4_0 integer prefill GEMM).
 */
public final class KernelOrderCpuTime {
    public static void main(String[] a) {
        for (String step : a) {
            String[] p = step.split(":");
            System.out.println("== " + step);
            switch (p[0]) {
                case "gemm" -> {
                    System.setProperty("kernels", p.length > 3 ? p[3] : "own");
                    GemmCpuTime.main(new String[] {p[1], p[2]});
                }
                case "mv" -> {
                    String[] types = p[3].split(",");
                    String[] args = new String[2 + types.length];
                    args[0] = p[1];
                    args[1] = p[2];
                    System.arraycopy(types, 0, args, 2, types.length);
                    MatVecCpuTime.main(args);
                }
                default -> throw new IllegalArgumentException(step);
            }
        }
    }
}
