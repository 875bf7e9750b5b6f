// Keys/s of YCSB 0.17's own ScrambledZipfianGenerator (site.ycsb:core:0.17.0),
// the counterpart of zipf_rate.c.  usage: java -cp core-0.17.0.jar:DIR ZipfBench N ITEMS
// Prints one line per timed run: "java <draws/s>".  The JIT is warmed up by
// WARMUP untimed runs of N draws first.
import site.ycsb.generator.ScrambledZipfianGenerator;

public final class ZipfBench {
    private static final int WARMUP = 3;
    private static final int RUNS = 3;

    public static void main(String[] args) {
        long n = Long.parseLong(args[0]);
        long items = Long.parseLong(args[1]);
        // zipfianconstant 0.99 (YCSB's default; uses its precomputed zeta(1e10))
        ScrambledZipfianGenerator gen = new ScrambledZipfianGenerator(0, items - 1);
        long sink = 0;
        for (int w = 0; w < WARMUP; w++) {
            for (long i = 0; i < n; i++) {
                sink += gen.nextValue();
            }
        }
        for (int r = 0; r < RUNS; r++) {
            long t0 = System.nanoTime();
            for (long i = 0; i < n; i++) {
                sink += gen.nextValue();
            }
            double secs = (System.nanoTime() - t0) / 1e9;
            System.out.printf("java %.0f%n", n / secs);
        }
        // keeps the draws live; also a cheap sanity check of the range
        if (sink < 0) {
            System.out.println("negative sum");
        }
    }
}
