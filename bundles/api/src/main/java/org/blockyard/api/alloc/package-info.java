/**
 * Block allocation: the {@link org.blockyard.api.alloc.BlockAllocator} service that storage engines call
 * (file-oriented {@code getBlocks} and the extent interface), the value types it answers with, its typed
 * errors, and the {@link org.blockyard.api.alloc.AllocationPolicy} SPI through which allocation policies
 * (goal choice, group order, window sizing, in-group search) are plugged in.
 */
@Export
@Version("0.8.0")
package org.blockyard.api.alloc;

import org.osgi.annotation.bundle.Export;
import org.osgi.annotation.versioning.Version;
