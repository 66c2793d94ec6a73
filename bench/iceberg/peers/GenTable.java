// Builds the benchmark table with the Iceberg Java reference implementation (1.10.1):
// 20 fast appends x 5,000 data files (stats for 12 columns), one row delta with 2,000
// position-delete + 500 equality-delete files, one delete of 1,000 data files (status-2
// entries). Data files are not written (only manifests are read by the benchmarks).
// Run by peers.sh setup: java -cp <iceberg + hadoop jars>:<classes> GenTable file:<dir> [commits] [files-per-commit]
import java.nio.ByteBuffer;
import java.util.*;
import org.apache.hadoop.conf.Configuration;
import org.apache.iceberg.*;
import org.apache.iceberg.hadoop.HadoopTables;
import org.apache.iceberg.types.Conversions;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.Types;

public class GenTable {
  static final long MIB = 1L << 20;

  public static void main(String[] args) {
    String location = args[0];
    int commits = args.length > 1 ? Integer.parseInt(args[1]) : 20;
    int perCommit = args.length > 2 ? Integer.parseInt(args[2]) : 5000;
    Schema schema = new Schema(
        Types.NestedField.required(1, "id", Types.LongType.get()),
        Types.NestedField.required(2, "ts", Types.TimestampType.withZone()),
        Types.NestedField.required(3, "region", Types.StringType.get()),
        Types.NestedField.optional(4, "user_id", Types.StringType.get()),
        Types.NestedField.optional(5, "amount", Types.DoubleType.get()),
        Types.NestedField.optional(6, "qty", Types.IntegerType.get()),
        Types.NestedField.optional(7, "price", Types.DecimalType.of(12, 2)),
        Types.NestedField.optional(8, "active", Types.BooleanType.get()),
        Types.NestedField.optional(9, "event", Types.StringType.get()),
        Types.NestedField.optional(10, "country", Types.StringType.get()),
        Types.NestedField.optional(11, "score", Types.FloatType.get()),
        Types.NestedField.optional(12, "seq", Types.LongType.get()));
    PartitionSpec spec = PartitionSpec.builderFor(schema).identity("region").day("ts").build();
    Map<String, String> props = new HashMap<>();
    props.put(TableProperties.FORMAT_VERSION, "2");
    // keep one manifest per append (no merging on the row delta / delete commits)
    props.put(TableProperties.MANIFEST_MERGE_ENABLED, "false");
    Table table = new HadoopTables(new Configuration()).create(schema, spec, props, location);

    String[] regions = {"eu", "us", "ap"};
    Random rnd = new Random(42);
    List<String> firstCommitPaths = new ArrayList<>();
    for (int c = 0; c < commits; c++) {
      AppendFiles append = table.newFastAppend();
      for (int i = 0; i < perCommit; i++) {
        String region = regions[i % 3];
        String day = String.format("2026-11-%02d", (i % 28) + 1);
        String path = String.format("%s/data/region=%s/ts_day=%s/%05d-%d-%s-%05d.parquet",
            location, region, day, c, i, new UUID(rnd.nextLong(), rnd.nextLong()), i);
        if (c == 0) firstCommitPaths.add(path);
        long records = 1000 + rnd.nextInt(100_000);
        long size = i % 4 == 0 ? 450 * MIB + i : 3 * MIB + rnd.nextInt(1 << 20);
        append.appendFile(DataFiles.builder(spec)
            .withPath(path)
            .withFormat(FileFormat.PARQUET)
            .withPartitionPath("region=" + region + "/ts_day=" + day)
            .withRecordCount(records)
            .withFileSizeInBytes(size)
            .withMetrics(metrics(schema, records, rnd))
            .withSplitOffsets(List.of(4L))
            .withSortOrder(SortOrder.unsorted())
            .build());
      }
      append.commit();
    }

    RowDelta delta = table.newRowDelta();
    for (int i = 0; i < 2500; i++) {
      String region = regions[i % 3];
      String day = String.format("2026-11-%02d", (i % 28) + 1);
      FileMetadata.Builder b = FileMetadata.deleteFileBuilder(spec);
      b = i < 2000 ? b.ofPositionDeletes() : b.ofEqualityDeletes(1);
      delta.addDeletes(b
          .withPath(String.format("%s/data/region=%s/ts_day=%s/delete-%05d-%s.parquet",
              location, region, day, i, new UUID(rnd.nextLong(), rnd.nextLong())))
          .withFormat(FileFormat.PARQUET)
          .withPartitionPath("region=" + region + "/ts_day=" + day)
          .withRecordCount(5 + i % 50)
          .withFileSizeInBytes(2_000 + i)
          .build());
    }
    delta.commit();

    DeleteFiles delete = table.newDelete();
    for (int i = 0; i < 1000; i++) delete.deleteFile(firstCommitPaths.get(i * 5));
    delete.commit();

    table.refresh();
    Snapshot s = table.currentSnapshot();
    System.out.println("metadata: " + ((HasTableOperations) table).operations().current().metadataFileLocation());
    System.out.println("snapshot summary: " + s.summary());
    System.out.println("manifests: " + s.allManifests(table.io()).size());
  }

  static Metrics metrics(Schema schema, long records, Random rnd) {
    Map<Integer, Long> sizes = new HashMap<>(), values = new HashMap<>(), nulls = new HashMap<>(), nans = new HashMap<>();
    Map<Integer, ByteBuffer> lower = new HashMap<>(), upper = new HashMap<>();
    for (Types.NestedField f : schema.columns()) {
      int id = f.fieldId();
      sizes.put(id, 1000L + rnd.nextInt(1_000_000));
      values.put(id, records);
      nulls.put(id, f.isOptional() ? (long) rnd.nextInt(100) : 0L);
      Type t = f.type();
      if (t.typeId() == Type.TypeID.DOUBLE || t.typeId() == Type.TypeID.FLOAT) nans.put(id, 0L);
      Object lo, hi;
      switch (t.typeId()) {
        case LONG: lo = (long) rnd.nextInt(1000); hi = 1_000_000_000L + rnd.nextInt(1000); break;
        case TIMESTAMP: lo = 1_790_000_000_000_000L + rnd.nextInt(1000); hi = lo.hashCode() + 1_790_000_100_000_000L; break;
        case STRING: lo = "aaaa-" + rnd.nextInt(1000); hi = "zzzz-" + rnd.nextInt(1000); break;
        case DOUBLE: lo = rnd.nextDouble(); hi = 1000 + rnd.nextDouble(); break;
        case INTEGER: lo = rnd.nextInt(10); hi = 1000 + rnd.nextInt(10); break;
        case DECIMAL: lo = new java.math.BigDecimal("1.25"); hi = new java.math.BigDecimal("9999.99"); break;
        case BOOLEAN: lo = false; hi = true; break;
        case FLOAT: lo = rnd.nextFloat(); hi = 10 + rnd.nextFloat(); break;
        default: throw new IllegalStateException(t.toString());
      }
      lower.put(id, Conversions.toByteBuffer(t, lo));
      upper.put(id, Conversions.toByteBuffer(t, hi));
    }
    return new Metrics(records, sizes, values, nulls, nans, lower, upper);
  }
}
