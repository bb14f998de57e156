package dev.edgelm.model;
final class Tm {
    static final String[] N = {"rmsnorm","add","mlpsilu","betadecay","normqk","gatednorm","conv","recurrence","attn-norm-rope","attn-core","embed"};
    static final long[] T = new long[N.length];
    static { Runtime.getRuntime().addShutdownHook(new Thread(() -> { StringBuilder b = new StringBuilder(); for (int i = 0; i < N.length; i++) b.append(String.format("%s %.3f s, ", N[i], T[i] / 1e9)); System.err.println(b); })); }
}
