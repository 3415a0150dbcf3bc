package org.blockyard.cli;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;
import picocli.CommandLine.Model.PositionalParamSpec;

/**
 * The usage list of the README, made from the commands themselves so the two cannot drift
 * (ReadmeUsageTest compares them): every command that runs something, with each option and its default
 * ({@code [--writers 16]}), its label where it has none ({@code [--json FILE]}), required ones without
 * brackets, and the parameters. {@code --help}, {@code --version} and {@code --debug}, which every command
 * takes, are left out.
 */
public final class Usage {
    /** The README's usage block is this wide, as the tables are. */
    public static final int WIDTH = 120;

    private Usage() {}

    /** One synopsis per command without subcommands, depth first, in the order the commands were added. */
    public static String synopses(CommandLine root) {
        StringBuilder out = new StringBuilder();
        add(root, out);
        return out.toString();
    }

    private static void add(CommandLine cmd, StringBuilder out) {
        Map<String, CommandLine> subs = cmd.getSubcommands();
        if (subs.isEmpty()) {
            out.append(synopsis(cmd.getCommandSpec()));
            return;
        }
        for (CommandLine sub : subs.values()) add(sub, out);
    }

    static String synopsis(CommandSpec spec) {
        List<String> words = new ArrayList<>();
        for (OptionSpec o : spec.options()) {
            String name = o.longestName();
            if (o.usageHelp() || o.versionHelp() || o.hidden() || name.equals("--debug") || o.group() != null) continue;
            String word;
            if (o.arity().max() == 0) {
                boolean on = "true".equals(o.defaultValue());
                word = o.negatable() && on ? "--no-" + name.substring(2) : name;
            } else {
                String label = o.paramLabel().startsWith("<") ? "VALUE" : o.paramLabel();
                String value = o.defaultValue() != null ? o.defaultValue() : label;
                word = name + " " + value;
            }
            words.add(o.required() ? word : "[" + word + "]");
        }
        for (CommandLine.Model.ArgGroupSpec g : spec.argGroups()) words.add(g.synopsis().replace('=', ' '));
        if (!spec.unmatchedArgsBindings().isEmpty()) words.add("[--KEY=VALUE...]"); // keys the command reads itself
        for (PositionalParamSpec p : spec.positionalParameters())
            words.add(p.arity().min() == 0 ? "[" + p.paramLabel() + "]" : p.paramLabel());
        String head = "./" + spec.qualifiedName();
        String indent = " ".repeat(Math.min(head.length() + 1, 30));
        StringBuilder out = new StringBuilder(head);
        int col = head.length();
        for (String w : words) {
            if (col + 1 + w.length() > WIDTH) {
                out.append('\n').append(indent).append(w);
                col = indent.length() + w.length();
            } else {
                out.append(' ').append(w);
                col += 1 + w.length();
            }
        }
        return out.append('\n').toString();
    }
}
