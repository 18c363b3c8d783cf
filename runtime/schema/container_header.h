/* SPDX-License-Identifier: Apache-2.0 */
/* The fixed 64-byte header at offset 0 of every epctx context-binary
 * container. Shared by the host writer and the device reader; all fields
 * little-endian. The flatbuffer metadata (container.fbs) and the segments it
 * describes follow; see container.fbs for the layout.
 *
 *   off size field
 *   0   8    magic               "EPCTXBIN"
 *   8   2    format_major        EPCTX_CONTAINER_FORMAT_MAJOR
 *   10  2    format_minor        EPCTX_CONTAINER_FORMAT_MINOR
 *   12  4    header_size         64 (readers skip bytes they do not know)
 *   16  8    total_size          bytes of the whole container
 *   24  8    metadata_offset     flatbuffer root, 8-byte aligned
 *   32  8    metadata_size
 *   40  4    segment_alignment   power of two, >= 64 (4096 by default)
 *   44  4    flags               0
 *   48  16   reserved            zero
 *
 * Format versions: a reader accepts a major it lists and any minor of it
 * (minors only add optional flatbuffer fields). History: 1.0 first. */
#ifndef EPCTX_CONTAINER_HEADER_H
#define EPCTX_CONTAINER_HEADER_H

#define EPCTX_CONTAINER_MAGIC "EPCTXBIN"
#define EPCTX_CONTAINER_MAGIC_SIZE 8
#define EPCTX_CONTAINER_HEADER_SIZE 64
#define EPCTX_CONTAINER_FORMAT_MAJOR 1
#define EPCTX_CONTAINER_FORMAT_MINOR 0
#define EPCTX_CONTAINER_DEFAULT_ALIGNMENT 4096

#define EPCTX_CONTAINER_OFF_FORMAT_MAJOR 8
#define EPCTX_CONTAINER_OFF_FORMAT_MINOR 10
#define EPCTX_CONTAINER_OFF_HEADER_SIZE 12
#define EPCTX_CONTAINER_OFF_TOTAL_SIZE 16
#define EPCTX_CONTAINER_OFF_METADATA_OFFSET 24
#define EPCTX_CONTAINER_OFF_METADATA_SIZE 32
#define EPCTX_CONTAINER_OFF_SEGMENT_ALIGNMENT 40
#define EPCTX_CONTAINER_OFF_FLAGS 44

#endif
