package org.blockyard.runtime.io.bench;

import com.typesafe.config.ConfigException;
import com.typesafe.config.ConfigFactory;

import picocli.CommandLine;

/** Parses sizes the way the configuration does: 4096, 4KiB, 1MiB, 1GiB, 1g. */
final class Sizes implements CommandLine.ITypeConverter<Long> {
    @Override
    public Long convert(String value) {
        try {
            long n = ConfigFactory.parseString("s = \"" + value.replace("\"", "") + "\"").getBytes("s");
            if (n <= 0) throw new CommandLine.TypeConversionException("size must be positive: " + value);
            return n;
        } catch (ConfigException e) {
            throw new CommandLine.TypeConversionException("not a size: " + value + " (e.g. 4096, 4KiB, 1MiB, 1GiB)");
        }
    }
}
