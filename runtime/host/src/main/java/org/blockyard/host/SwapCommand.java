package org.blockyard.host;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.Map;
import java.util.stream.Stream;

import com.typesafe.config.Config;
import org.blockyard.benches.Swap;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code blockyard bench swap} with plugin bundles: each run starts a host over the store the benchmark
 * drives, on a temporary deploy folder, and between switches installs, updates and uninstalls the fifo
 * elevator and the no-reservation policy bundles there ({@link PluginChurn}); fifo joins the default
 * elevators. {@code --no-bundles} runs the engine's benchmark alone.
 */
@Command(name = "swap", mixinStandardHelpOptions = true,
        description = {"Writers through the whole stack while elevators and policies are switched by name and "
                + "plugin bundles are installed, updated and uninstalled in a host; counts what was lost or "
                + "issued twice, verifies every byte, and times each switch."})
public final class SwapCommand extends org.blockyard.benches.SwapCommand {

    @Option(names = "--no-bundles", description = "run without a host: no plugin bundle events")
    boolean noBundles;

    @Override
    protected Map<String, Object> measureOnce(Config config) throws Exception {
        if (noBundles) return super.measureOnce(config);
        Path work = Files.createTempDirectory("blockyard-swap");
        try {
            PluginChurn churn = PluginChurn.of(Host.builtPlugins(), work);
            return Swap.run(spec(churn.elevators(), churn.actions()), config, progressStream(), churn.engine());
        } finally {
            deleteTree(work);
        }
    }

    private static void deleteTree(Path dir) throws IOException {
        try (Stream<Path> s = Files.walk(dir)) {
            for (Path p : s.sorted(Comparator.reverseOrder()).toList()) Files.deleteIfExists(p);
        }
    }
}
