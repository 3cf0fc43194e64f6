package conformance;

import java.io.IOException;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;

import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.ConfigOptions;
import org.apache.flink.table.connector.source.DynamicTableSource;
import org.apache.flink.table.connector.source.LookupTableSource;
import org.apache.flink.table.connector.source.lookup.LookupFunctionProvider;
import org.apache.flink.table.data.DecimalData;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.data.StringData;
import org.apache.flink.table.factories.DynamicTableSourceFactory;
import org.apache.flink.table.factories.FactoryUtil;
import org.apache.flink.table.functions.FunctionContext;
import org.apache.flink.table.functions.LookupFunction;
import org.apache.flink.table.types.logical.DecimalType;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.RowType;

/**
 * The conformance suite's lookup table for Apache Flink: {@code 'connector' =
 * 'conformance-lookup'} with {@code 'path'} naming a file of the dimension rows, which
 * {@link FileLookupFunction#open} loads once (the data never changes during a run). A key row
 * matches every stored row whose lookup-key fields equal it; a NULL key value matches nothing
 * (Flink never even calls a lookup with one). No cache, no projection or filter push-down: the
 * planner applies the dimension-only filters and computed columns to the fetched rows itself.
 *
 * <p>File format (written by tests/conformance/model.py {@code write_lookup_file}): one row per
 * line, fields separated by a tab; a field is {@code \N} for NULL, else its text with {@code
 * \\}, {@code \t}, {@code \n} escaped. Numbers are Python's repr (doubles round-trip exactly),
 * booleans {@code true}/{@code false}.
 */
public class FileLookupTableFactory implements DynamicTableSourceFactory {
    public static final String IDENTIFIER = "conformance-lookup";
    public static final ConfigOption<String> PATH =
            ConfigOptions.key("path").stringType().noDefaultValue();

    @Override
    public String factoryIdentifier() {
        return IDENTIFIER;
    }

    @Override
    public Set<ConfigOption<?>> requiredOptions() {
        Set<ConfigOption<?>> options = new HashSet<>();
        options.add(PATH);
        return options;
    }

    @Override
    public Set<ConfigOption<?>> optionalOptions() {
        return new HashSet<>();
    }

    @Override
    public DynamicTableSource createDynamicTableSource(Context context) {
        FactoryUtil.TableFactoryHelper helper = FactoryUtil.createTableFactoryHelper(this, context);
        helper.validate();
        RowType rowType = (RowType) context.getPhysicalRowDataType().getLogicalType();
        return new Source(helper.getOptions().get(PATH), rowType);
    }

    /** A lookup-only source (no scan: a lookup join is the only way to read it). */
    static final class Source implements LookupTableSource {
        private final String path;
        private final RowType rowType;

        Source(String path, RowType rowType) {
            this.path = path;
            this.rowType = rowType;
        }

        @Override
        public LookupRuntimeProvider getLookupRuntimeProvider(LookupContext context) {
            int[][] keys = context.getKeys();
            int[] fields = new int[keys.length];
            for (int i = 0; i < keys.length; i++) {
                if (keys[i].length != 1) {
                    throw new IllegalArgumentException("nested lookup keys are not supported");
                }
                fields[i] = keys[i][0];
            }
            return LookupFunctionProvider.of(new FileLookupFunction(path, rowType, fields));
        }

        @Override
        public DynamicTableSource copy() {
            return new Source(path, rowType);
        }

        @Override
        public String asSummaryString() {
            return "conformance-lookup(" + path + ")";
        }
    }

    /** Every stored row whose key fields equal the key row's. */
    public static final class FileLookupFunction extends LookupFunction {
        private static final long serialVersionUID = 1L;
        private final String path;
        private final RowType rowType;
        private final int[] keyFields;
        private transient List<GenericRowData> rows;

        FileLookupFunction(String path, RowType rowType, int[] keyFields) {
            this.path = path;
            this.rowType = rowType;
            this.keyFields = keyFields;
        }

        @Override
        public void open(FunctionContext context) throws Exception {
            List<LogicalType> types = rowType.getChildren();
            rows = new ArrayList<>();
            for (String line : Files.readAllLines(Paths.get(path), StandardCharsets.UTF_8)) {
                if (line.isEmpty()) {
                    continue;
                }
                String[] fields = line.split("\t", -1);
                if (fields.length != types.size()) {
                    throw new IOException(
                            path + ": " + fields.length + " fields, expected " + types.size()
                                    + ": " + line);
                }
                GenericRowData row = new GenericRowData(types.size());
                for (int i = 0; i < fields.length; i++) {
                    row.setField(i, parse(fields[i], types.get(i)));
                }
                rows.add(row);
            }
        }

        @Override
        public Collection<RowData> lookup(RowData keyRow) throws IOException {
            Object[] key = new Object[keyFields.length];
            for (int i = 0; i < keyFields.length; i++) {
                LogicalType type = rowType.getTypeAt(keyFields[i]);
                key[i] = RowData.createFieldGetter(type, i).getFieldOrNull(keyRow);
                if (key[i] == null) {
                    return Collections.emptyList(); // NULL never equals anything
                }
            }
            List<RowData> out = new ArrayList<>();
            for (GenericRowData row : rows) {
                boolean match = true;
                for (int i = 0; i < keyFields.length && match; i++) {
                    match = Objects.equals(row.getField(keyFields[i]), key[i]);
                }
                if (match) {
                    out.add(row);
                }
            }
            return out;
        }

        private static Object parse(String field, LogicalType type) throws IOException {
            if (field.equals("\\N")) {
                return null;
            }
            String text = unescape(field);
            switch (type.getTypeRoot()) {
                case INTEGER:
                    return Integer.parseInt(text);
                case BIGINT:
                    return Long.parseLong(text);
                case SMALLINT:
                    return Short.parseShort(text);
                case TINYINT:
                    return Byte.parseByte(text);
                case DOUBLE:
                    return Double.parseDouble(text);
                case FLOAT:
                    return Float.parseFloat(text);
                case BOOLEAN:
                    return Boolean.parseBoolean(text);
                case CHAR:
                case VARCHAR:
                    return StringData.fromString(text);
                case DECIMAL:
                    DecimalType d = (DecimalType) type;
                    return DecimalData.fromBigDecimal(
                            new BigDecimal(text), d.getPrecision(), d.getScale());
                default:
                    throw new IOException("conformance-lookup: unsupported type " + type);
            }
        }

        private static String unescape(String field) {
            if (field.indexOf('\\') < 0) {
                return field;
            }
            StringBuilder out = new StringBuilder();
            for (int i = 0; i < field.length(); i++) {
                char c = field.charAt(i);
                if (c == '\\' && i + 1 < field.length()) {
                    char next = field.charAt(++i);
                    out.append(next == 't' ? '\t' : next == 'n' ? '\n' : next);
                } else {
                    out.append(c);
                }
            }
            return out.toString();
        }
    }
}
