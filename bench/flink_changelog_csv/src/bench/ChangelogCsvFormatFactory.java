package bench;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Set;

import org.apache.flink.api.common.serialization.DeserializationSchema;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.ReadableConfig;
import org.apache.flink.formats.csv.CsvRowDataDeserializationSchema;
import org.apache.flink.table.connector.ChangelogMode;
import org.apache.flink.table.connector.format.DecodingFormat;
import org.apache.flink.table.connector.source.DynamicTableSource;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.factories.DeserializationFormatFactory;
import org.apache.flink.table.factories.DynamicTableFactory;
import org.apache.flink.table.runtime.typeutils.InternalTypeInfo;
import org.apache.flink.table.types.DataType;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.table.types.logical.VarCharType;
import org.apache.flink.types.RowKind;

/**
 * The benchmark's changelog CSV format for Flink ({@code 'format' = 'changelog-csv'}): each
 * line is {@code op,<the table's columns>}, op one of +I, -U, +U, -D, the files the product
 * reads with {@code 'format' = 'csv', 'changelog.op-column' = 'op'} (op first: CSV is
 * positional). Flink ships no changelog CSV format (its changelog formats are JSON envelopes);
 * this one parses each line with Flink's own CSV deserializer and sets the row's kind from op,
 * so Flink reads the same bytes at the cost of its built-in CSV parsing plus one row copy.
 */
public final class ChangelogCsvFormatFactory implements DeserializationFormatFactory {

  @Override
  public String factoryIdentifier() {
    return "changelog-csv";
  }

  @Override
  public Set<ConfigOption<?>> requiredOptions() {
    return Collections.emptySet();
  }

  @Override
  public Set<ConfigOption<?>> optionalOptions() {
    return Collections.emptySet();
  }

  @Override
  public DecodingFormat<DeserializationSchema<RowData>> createDecodingFormat(
      DynamicTableFactory.Context context, ReadableConfig formatOptions) {
    return new DecodingFormat<DeserializationSchema<RowData>>() {
      @Override
      public DeserializationSchema<RowData> createRuntimeDecoder(
          DynamicTableSource.Context sourceContext, DataType physicalDataType) {
        RowType row = (RowType) physicalDataType.getLogicalType();
        List<RowType.RowField> fields = new ArrayList<>();
        fields.add(new RowType.RowField("__op", new VarCharType(VarCharType.MAX_LENGTH)));
        fields.addAll(row.getFields());
        RowType withOp = new RowType(fields);
        DeserializationSchema<RowData> csv =
            new CsvRowDataDeserializationSchema.Builder(withOp, InternalTypeInfo.of(withOp))
                .build();
        TypeInformation<RowData> produced = sourceContext.createTypeInformation(physicalDataType);
        return new Changes(csv, produced, row.getFieldCount());
      }

      @Override
      public ChangelogMode getChangelogMode() {
        return ChangelogMode.all();
      }
    };
  }

  /** One CSV line -> the row without its op field, with the row kind op names. */
  static final class Changes implements DeserializationSchema<RowData> {
    private static final long serialVersionUID = 1L;
    private final DeserializationSchema<RowData> csv;
    private final TypeInformation<RowData> produced;
    private final int arity;

    Changes(DeserializationSchema<RowData> csv, TypeInformation<RowData> produced, int arity) {
      this.csv = csv;
      this.produced = produced;
      this.arity = arity;
    }

    @Override
    public void open(InitializationContext context) throws Exception {
      csv.open(context);
    }

    @Override
    public RowData deserialize(byte[] message) throws IOException {
      GenericRowData parsed = (GenericRowData) csv.deserialize(message);
      if (parsed == null) {
        return null;
      }
      GenericRowData out = new GenericRowData(kind(String.valueOf(parsed.getField(0))), arity);
      for (int i = 0; i < arity; i++) {
        out.setField(i, parsed.getField(i + 1));
      }
      return out;
    }

    private static RowKind kind(String op) throws IOException {
      switch (op) {
        case "+I":
          return RowKind.INSERT;
        case "-U":
          return RowKind.UPDATE_BEFORE;
        case "+U":
          return RowKind.UPDATE_AFTER;
        case "-D":
          return RowKind.DELETE;
        default:
          throw new IOException("changelog-csv: unknown op '" + op + "'; use +I, -U, +U, -D");
      }
    }

    @Override
    public boolean isEndOfStream(RowData next) {
      return false;
    }

    @Override
    public TypeInformation<RowData> getProducedType() {
      return produced;
    }
  }
}
