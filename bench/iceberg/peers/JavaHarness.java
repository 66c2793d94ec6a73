// Iceberg Java reference (1.10.1, iceberg-spark-runtime jar; Hadoop client 3.4.1) contender.
// Declared in org.apache.iceberg to reach ManifestReader.entries() (package-private: every entry,
// live and deleted, decoded into reused containers) -- the reader's own lowest public-ish level.
//   run by peers.sh: java -cp <jars>:<classes> org.apache.iceberg.JavaHarness MODE <metadata.json> [passes]
// MODE decode-full|decode-proj: for each manifest of the current snapshot, one at a time on this
//   thread: ManifestFiles.read / readDeleteManifest (HadoopFileIO, default Configuration) and
//   iterate entries(); -proj adds .select(content, file_path, file_format, partition,
//   record_count, file_size_in_bytes) so the stats maps are skipped by the Avro resolver.
// MODE health-full|health-proj: StaticTableOperations(metadata.json) -> BaseTable -> current
//   snapshot's data + delete manifests -> public ManifestReader iterator() (live files) -> counts.
// Prints one JSON line: per-pass wall, process CPU (OperatingSystemMXBean.getProcessCpuTime,
// all JVM threads incl. JIT and GC), VmHWM.
package org.apache.iceberg;

import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.*;
import org.apache.hadoop.conf.Configuration;
import org.apache.iceberg.hadoop.HadoopFileIO;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.io.FileIO;

public class JavaHarness {
  static final List<String> COLS = List.of(
      "content", "file_path", "file_format", "partition", "record_count", "file_size_in_bytes");
  static final long SMALL = 384L << 20;
  static final com.sun.management.OperatingSystemMXBean OS =
      (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();

  static double cpu() { return OS.getProcessCpuTime() / 1e9; }
  static double now() { return System.nanoTime() / 1e9; }

  static ManifestReader<? extends ContentFile<?>> open(
      ManifestFile m, FileIO io, Map<Integer, PartitionSpec> specs, boolean proj) {
    ManifestReader<? extends ContentFile<?>> r = m.content() == ManifestContent.DATA
        ? ManifestFiles.read(m, io, specs)
        : ManifestFiles.readDeleteManifest(m, io, specs);
    return proj ? r.select(COLS) : r;
  }

  public static void main(String[] args) throws Exception {
    String mode = args[0];
    String location = args[1];
    int passes = args.length > 2 ? Integer.parseInt(args[2]) : 6;
    boolean proj = mode.endsWith("-proj");
    FileIO io = new HadoopFileIO(new Configuration());
    List<String> results = new ArrayList<>();
    String check = "";
    if (mode.startsWith("decode")) {
      Table table = new BaseTable(new StaticTableOperations(location, io), "bench");  // setup
      Map<Integer, PartitionSpec> specs = table.specs();
      List<ManifestFile> manifests = table.currentSnapshot().allManifests(io);
      for (int p = 0; p < passes; p++) {
        long entries = 0, deleted = 0, bytes = 0, records = 0, pathChars = 0, deletes = 0, partVals = 0;
        double w0 = now(), c0 = cpu();
        for (ManifestFile m : manifests) {
          try (ManifestReader<? extends ContentFile<?>> reader = open(m, io, specs, proj);
              CloseableIterable<? extends ManifestEntry<? extends ContentFile<?>>> it = reader.entries()) {
            for (ManifestEntry<? extends ContentFile<?>> e : it) {
              ContentFile<?> f = e.file();
              entries++;
              if (e.status() == ManifestEntry.Status.DELETED) deleted++;
              if (f.content() != FileContent.DATA) deletes++;
              bytes += f.fileSizeInBytes();
              records += f.recordCount();
              pathChars += f.location().length();
              StructLike part = f.partition();
              for (int i = 0; i < part.size(); i++) if (part.get(i, Object.class) != null) partVals++;
            }
          }
        }
        results.add(String.format("{\"wall\":%.6f,\"cpu\":%.6f}", now() - w0, cpu() - c0));
        check = String.format(
            "{\"entries\":%d,\"deleted\":%d,\"bytes\":%d,\"records\":%d,\"pathChars\":%d,\"deletes\":%d,\"partVals\":%d}",
            entries, deleted, bytes, records, pathChars, deletes, partVals);
      }
    } else {
      for (int p = 0; p < passes; p++) {
        double w0 = now(), c0 = cpu();
        Table table = new BaseTable(new StaticTableOperations(location, io), "bench");
        Map<Integer, PartitionSpec> specs = table.specs();
        long dataFiles = 0, small = 0, deleteFiles = 0, dataBytes = 0, records = 0;
        Snapshot snapshot = table.currentSnapshot();
        for (ManifestFile m : snapshot == null ? List.<ManifestFile>of() : snapshot.allManifests(io)) {
          try (ManifestReader<? extends ContentFile<?>> reader = open(m, io, specs, proj)) {
            for (ContentFile<?> f : reader) {  // public API: live files only
              if (f.content() == FileContent.DATA) {
                dataFiles++;
                dataBytes += f.fileSizeInBytes();
                records += f.recordCount();
                if (f.fileSizeInBytes() < SMALL) small++;
              } else {
                deleteFiles++;
              }
            }
          }
        }
        results.add(String.format("{\"wall\":%.6f,\"cpu\":%.6f}", now() - w0, cpu() - c0));
        check = String.format(
            "{\"dataFiles\":%d,\"smallFiles\":%d,\"deleteFiles\":%d,\"dataBytes\":%d,\"records\":%d}",
            dataFiles, small, deleteFiles, dataBytes, records);
      }
    }
    long hwm = 0;
    for (String line : Files.readAllLines(Path.of("/proc/self/status")))
      if (line.startsWith("VmHWM:")) hwm = Long.parseLong(line.replaceAll("\\D", ""));
    System.out.println(String.format(
        "{\"impl\":\"java\",\"mode\":\"%s\",\"passes\":[%s],\"check\":%s,\"vmHwmKb\":%d}",
        mode, String.join(",", results), check, hwm));
  }
}
