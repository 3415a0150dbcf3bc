package org.blockyard.runtime.alloc;

import java.util.List;

import com.typesafe.config.Config;

import org.blockyard.api.alloc.AllocationPolicy;

/** The built-in allocation policies by id. */
public final class Policies {
    private Policies() {}

    public static final List<String> BUILT_IN = List.of("reservation", "no-reservation");

    /** The built-in policy {@code id}, configured from {@code blockyard.alloc.reservation}. */
    public static AllocationPolicy byId(String id, Config config) {
        Config r = config.getConfig("blockyard.alloc.reservation");
        return switch (id) {
            case "reservation" -> {
                String mode = r.getString("mode");
                ReservationPolicy.Mode m = switch (mode) {
                    case "ext3" -> ReservationPolicy.Mode.EXT3;
                    case "extended" -> ReservationPolicy.Mode.EXTENDED;
                    default -> throw new IllegalArgumentException(
                            "blockyard.alloc.reservation.mode is '" + mode + "'; it must be ext3 or extended");
                };
                int max = m == ReservationPolicy.Mode.EXT3 ? r.getInt("ext3-max-window-blocks")
                        : r.getInt("extended-max-window-blocks");
                yield ReservationPolicy.of(m, r.getInt("initial-window-blocks"), max);
            }
            case "no-reservation" -> ReservationPolicy.noReservation();
            default -> throw new IllegalArgumentException("no allocation policy '" + id + "'; built in: "
                    + String.join(", ", BUILT_IN));
        };
    }
}
