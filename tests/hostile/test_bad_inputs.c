/* SPDX-License-Identifier: Apache-2.0 */
/* The table-driven half of tests/BAD_INPUTS.md: each row of kCases builds one
 * bad model (or a bad run of a good one) from the valid model `base`, feeds
 * it to the C API, and checks the code and a fragment of the message. Rows
 * are named as in the catalogue; test_catalogue.py checks that every
 * catalogue row names a row here or a test function elsewhere. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <epctx/epctx.h>

/* ---- a protobuf writer ---- */
typedef struct {
  uint8_t* p;
  size_t n, cap;
} buf;

static void put(buf* b, const void* d, size_t n) {
  if (b->n + n > b->cap) {
    b->cap = (b->n + n) * 2 + 64;
    b->p = realloc(b->p, b->cap);
    assert_non_null(b->p);
  }
  if (n) memcpy(b->p + b->n, d, n);
  b->n += n;
}
static void varint(buf* b, uint64_t v) {
  do {
    uint8_t c = (uint8_t)(v & 0x7f);
    v >>= 7;
    if (v) c |= 0x80;
    put(b, &c, 1);
  } while (v);
}
static void tag(buf* b, uint32_t field, uint32_t wt) { varint(b, ((uint64_t)field << 3) | wt); }
static void pint(buf* b, uint32_t field, uint64_t v) {
  tag(b, field, 0);
  varint(b, v);
}
static void pbytes(buf* b, uint32_t field, const void* d, size_t n) {
  tag(b, field, 2);
  varint(b, n);
  put(b, d, n);
}
static void pstr(buf* b, uint32_t field, const char* s) { pbytes(b, field, s, strlen(s)); }
static void pmsg(buf* b, uint32_t field, buf* m) {
  pbytes(b, field, m->p, m->n);
  free(m->p);
  *m = (buf){0};
}

/* ValueInfoProto of a tensor; rank < 0: no shape. */
static void value_info(buf* g, uint32_t field, const char* name, int dtype, int rank,
                       const int64_t* dims) {
  buf vi = {0}, type = {0}, tensor = {0}, shape = {0};
  pint(&tensor, 1, (uint64_t)dtype);
  for (int i = 0; i < rank; ++i) {
    buf dim = {0};
    pint(&dim, 1, (uint64_t)dims[i]);
    pmsg(&shape, 1, &dim);
  }
  if (rank >= 0) pmsg(&tensor, 2, &shape);
  pmsg(&type, 1, &tensor);
  pstr(&vi, 1, name);
  pmsg(&vi, 2, &type);
  pmsg(g, field, &vi);
}

/* TensorProto initializer with raw data. */
static void initializer(buf* g, const char* name, int dtype, int rank, const int64_t* dims,
                        const void* raw, size_t raw_bytes) {
  buf t = {0};
  for (int i = 0; i < rank; ++i) pint(&t, 1, (uint64_t)dims[i]);
  pint(&t, 2, (uint64_t)dtype);
  if (name) pstr(&t, 8, name);
  if (raw) pbytes(&t, 9, raw, raw_bytes);
  pmsg(g, 5, &t);
}

/* NodeProto: inputs/outputs NULL-terminated; attrs appended raw. */
static void node(buf* g, const char* op, const char* const* ins, const char* const* outs,
                 const buf* attrs) {
  buf n = {0};
  for (; ins && *ins; ++ins) pstr(&n, 1, *ins);
  for (; outs && *outs; ++outs) pstr(&n, 2, *outs);
  pstr(&n, 3, op);
  pstr(&n, 4, op);
  if (attrs) put(&n, attrs->p, attrs->n);
  pmsg(g, 1, &n);
}

static void attr_ints(buf* a, const char* name, const int64_t* v, int n) {
  buf at = {0};
  pstr(&at, 1, name);
  for (int i = 0; i < n; ++i) pint(&at, 8, (uint64_t)v[i]);
  pint(&at, 20, 7); /* INTS */
  pmsg(a, 5, &at);
}
static void attr_float(buf* a, const char* name, float f) {
  buf at = {0};
  pstr(&at, 1, name);
  tag(&at, 2, 5);
  put(&at, &f, 4);
  pint(&at, 20, 1); /* FLOAT */
  pmsg(a, 5, &at);
}

static void model(buf* m, buf* g, int opset) {
  buf op = {0};
  pint(m, 1, 8);
  pmsg(m, 7, g);
  pstr(&op, 1, "");
  pint(&op, 2, (uint64_t)opset);
  pmsg(m, 8, &op);
}

static const int64_t k23[2] = {2, 3};
enum { F = 1, I64 = 7, BOOL = 9 };

/* The valid model: Y = Relu(X), X and Y float [2,3]. */
static void base_graph(buf* g) {
  node(g, "Relu", (const char* const[]){"X", NULL}, (const char* const[]){"Y", NULL}, NULL);
  pstr(g, 2, "g");
  value_info(g, 11, "X", F, 2, k23);
  value_info(g, 12, "Y", F, 2, k23);
}
static void base(buf* m) {
  buf g = {0};
  base_graph(&g);
  model(m, &g, 13);
}

/* One op on X [2,3] float (plus extra inputs named in ins) to Y. */
static void one_op(buf* m, const char* op, const char* const* ins, const buf* attrs,
                   void (*extra)(buf*), int opset) {
  buf g = {0};
  node(&g, op, ins, (const char* const[]){"Y", NULL}, attrs);
  pstr(&g, 2, "g");
  if (extra) extra(&g);
  value_info(&g, 11, "X", F, 2, k23);
  value_info(&g, 12, "Y", F, -1, NULL);
  model(m, &g, opset);
}

/* ---- the cases ---- */
typedef enum { AT_CREATE, AT_RUN } phase;
typedef struct {
  const char* name;
  void (*build)(buf*);
  phase when;
  /* AT_RUN: X's dtype, rank, dims and bytes (0: float [2,3]) */
  int x_dtype, x_rank;
  int64_t x_dims[9];
  uint8_t x_fill;
  int code;
  const char* fragment;
} bad_case;

/* protobuf */
static void pb_empty(buf* m) { (void)m; }
static void pb_truncated_half(buf* m) {
  base(m);
  m->n /= 2;
}
static void pb_overlong_varint(buf* m) {
  uint8_t v[11];
  memset(v, 0xff, 10);
  v[10] = 0x01;
  tag(m, 1, 0);
  put(m, v, 11);
}
static void pb_length_past_end(buf* m) {
  base(m);
  m->p[3] = 0x7f; /* the graph's length prefix (one byte) */
}
static void pb_group_wire_type(buf* m) {
  base(m);
  tag(m, 20, 3);
}
static void pb_reserved_wire_type(buf* m) {
  base(m);
  tag(m, 20, 6);
}
static void pb_graph_as_varint(buf* m) {
  pint(m, 1, 8);
  pint(m, 7, 5);
}
static void pb_no_graph(buf* m) {
  buf op = {0};
  pint(m, 1, 8);
  pstr(&op, 1, "");
  pint(&op, 2, 13);
  pmsg(m, 8, &op);
}
static void pb_node_name_as_varint(buf* m) {
  buf g = {0}, n = {0};
  pint(&n, 3, 5);
  pmsg(&g, 1, &n);
  model(m, &g, 13);
}
static void pb_negative_dim(buf* m) {
  buf g = {0};
  const int64_t d[2] = {2, -3};
  node(&g, "Relu", (const char* const[]){"X", NULL}, (const char* const[]){"Y", NULL}, NULL);
  value_info(&g, 11, "X", F, 2, d);
  value_info(&g, 12, "Y", F, 2, k23);
  model(m, &g, 13);
}
static void pb_trailing_garbage(buf* m) {
  base(m);
  uint8_t junk[3] = {0xff, 0xff, 0xff};
  put(m, junk, 3);
}

/* graph */
static void gr_unnamed_initializer(buf* m) {
  buf g = {0};
  base_graph(&g);
  float one = 1;
  initializer(&g, NULL, F, 0, NULL, &one, 4);
  model(m, &g, 13);
}
static void gr_unnamed_input(buf* m) {
  buf g = {0};
  base_graph(&g);
  buf vi = {0};
  pmsg(&g, 11, &vi);
  model(m, &g, 13);
}
static void gr_unnamed_output(buf* m) {
  buf g = {0};
  base_graph(&g);
  buf vi = {0};
  pmsg(&g, 12, &vi);
  model(m, &g, 13);
}
static void gr_empty_value_infos_16mib(buf* m) {
  buf g = {0};
  base_graph(&g);
  while (g.n < ((size_t)16 << 20)) {
    buf vi = {0};
    pmsg(&g, 13, &vi);
  }
  model(m, &g, 13);
}
static void gr_undefined_node_input(buf* m) {
  buf g = {0};
  node(&g, "Add", (const char* const[]){"X", "nowhere", NULL}, (const char* const[]){"Y", NULL},
       NULL);
  value_info(&g, 11, "X", F, 2, k23);
  value_info(&g, 12, "Y", F, 2, k23);
  model(m, &g, 13);
}
static void gr_output_produced_twice(buf* m) {
  buf g = {0};
  node(&g, "Relu", (const char* const[]){"X", NULL}, (const char* const[]){"Y", NULL}, NULL);
  node(&g, "Neg", (const char* const[]){"X", NULL}, (const char* const[]){"Y", NULL}, NULL);
  value_info(&g, 11, "X", F, 2, k23);
  value_info(&g, 12, "Y", F, 2, k23);
  model(m, &g, 13);
}
static void gr_cycle(buf* m) {
  buf g = {0};
  node(&g, "Add", (const char* const[]){"X", "B", NULL}, (const char* const[]){"A", NULL}, NULL);
  node(&g, "Relu", (const char* const[]){"A", NULL}, (const char* const[]){"B", NULL}, NULL);
  node(&g, "Neg", (const char* const[]){"B", NULL}, (const char* const[]){"Y", NULL}, NULL);
  value_info(&g, 11, "X", F, 2, k23);
  value_info(&g, 12, "Y", F, 2, k23);
  model(m, &g, 13);
}
static void gr_unknown_op(buf* m) {
  one_op(m, "NoSuchOp", (const char* const[]){"X", NULL}, NULL, NULL, 13);
}
static void gr_unknown_domain(buf* m) {
  buf g = {0}, n = {0};
  pstr(&n, 1, "X");
  pstr(&n, 2, "Y");
  pstr(&n, 4, "Relu");
  pstr(&n, 7, "com.example");
  pmsg(&g, 1, &n);
  value_info(&g, 11, "X", F, 2, k23);
  value_info(&g, 12, "Y", F, 2, k23);
  model(m, &g, 13);
}
static void gr_no_nodes_no_outputs(buf* m) {
  buf g = {0};
  pstr(&g, 2, "g");
  model(m, &g, 13);
}
static void gr_output_never_produced(buf* m) {
  buf g = {0};
  base_graph(&g);
  value_info(&g, 12, "Z", F, 2, k23);
  model(m, &g, 13);
}
static void gr_opset_zero(buf* m) {
  buf g = {0};
  base_graph(&g);
  model(m, &g, 0);
}

/* tensors */
static void tn_rank_nine_input(buf* m) {
  buf g = {0};
  const int64_t d[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
  node(&g, "Relu", (const char* const[]){"X", NULL}, (const char* const[]){"Y", NULL}, NULL);
  value_info(&g, 11, "X", F, 9, d);
  value_info(&g, 12, "Y", F, -1, NULL);
  model(m, &g, 13);
}
static void init_b(buf* g, int dtype, int rank, const int64_t* dims, const void* raw, size_t n) {
  initializer(g, "B", dtype, rank, dims, raw, n);
}
static void ex_short_raw(buf* g) {
  float v[5] = {0};
  init_b(g, F, 2, k23, v, sizeof v);
}
static void tn_raw_data_short(buf* m) {
  one_op(m, "Add", (const char* const[]){"X", "B", NULL}, NULL, ex_short_raw, 13);
}
static void ex_huge_dims(buf* g) {
  const int64_t d[3] = {INT64_MAX / 2, 4, 4};
  init_b(g, F, 3, d, NULL, 0);
}
static void tn_dims_product_overflows(buf* m) {
  one_op(m, "Add", (const char* const[]){"X", "B", NULL}, NULL, ex_huge_dims, 13);
}
static void ex_dtype_zero(buf* g) {
  float v[6] = {0};
  init_b(g, 0, 2, k23, v, sizeof v);
}
static void tn_initializer_dtype_undefined(buf* m) {
  one_op(m, "Add", (const char* const[]){"X", "B", NULL}, NULL, ex_dtype_zero, 13);
}
static void ex_dtype_999(buf* g) {
  float v[6] = {0};
  init_b(g, 999, 2, k23, v, sizeof v);
}
static void tn_initializer_dtype_unknown(buf* m) {
  one_op(m, "Add", (const char* const[]){"X", "B", NULL}, NULL, ex_dtype_999, 13);
}
static void ex_bool_two(buf* g) {
  uint8_t v[6] = {0, 1, 2, 0, 1, 0};
  init_b(g, BOOL, 2, k23, v, sizeof v);
}
static void tn_bool_initializer_byte_two(buf* m) {
  one_op(m, "Where", (const char* const[]){"B", "X", "X", NULL}, NULL, ex_bool_two, 13);
}
static void ex_external(buf* g) {
  buf t = {0}, e = {0};
  pint(&t, 1, 2);
  pint(&t, 1, 3);
  pint(&t, 2, F);
  pstr(&t, 8, "B");
  pstr(&e, 1, "location");
  pstr(&e, 2, "../outside.bin");
  pmsg(&t, 13, &e);
  pint(&t, 14, 1);
  pmsg(g, 5, &t);
}
static void tn_external_data_in_buffer_model(buf* m) {
  one_op(m, "Add", (const char* const[]){"X", "B", NULL}, NULL, ex_external, 13);
}
static void ex_sparse(buf* g) {
  buf s = {0};
  pint(&s, 3, 2);
  pmsg(g, 15, &s);
}
static void tn_sparse_initializer(buf* m) {
  one_op(m, "Relu", (const char* const[]){"X", NULL}, NULL, ex_sparse, 13);
}

/* kernel attributes (refused at create, where the kernel checks them) */
static void ka_transpose_perm_short(buf* m) {
  buf a = {0};
  const int64_t p[1] = {0};
  attr_ints(&a, "perm", p, 1);
  one_op(m, "Transpose", (const char* const[]){"X", NULL}, &a, NULL, 13);
  free(a.p);
}
static void ka_transpose_perm_repeats(buf* m) {
  buf a = {0};
  const int64_t p[2] = {0, 0};
  attr_ints(&a, "perm", p, 2);
  one_op(m, "Transpose", (const char* const[]){"X", NULL}, &a, NULL, 13);
  free(a.p);
}
static void ka_perm_as_float(buf* m) {
  buf a = {0};
  attr_float(&a, "perm", 1.0f);
  one_op(m, "Transpose", (const char* const[]){"X", NULL}, &a, NULL, 13);
  free(a.p);
}
static void ka_softmax_axis_out_of_range(buf* m) {
  buf a = {0}, at = {0};
  pstr(&at, 1, "axis");
  pint(&at, 3, 7);
  pint(&at, 20, 2);
  pmsg(&a, 5, &at);
  one_op(m, "Softmax", (const char* const[]){"X", NULL}, &a, NULL, 13);
  free(a.p);
}
static void ex_shape_bad(buf* g) {
  const int64_t d[1] = {2};
  const int64_t v[2] = {4, 4};
  initializer(g, "S", I64, 1, d, v, sizeof v);
}
static void ka_reshape_to_wrong_count(buf* m) {
  one_op(m, "Reshape", (const char* const[]){"X", "S", NULL}, NULL, ex_shape_bad, 13);
}
static void ex_idx(buf* g) {
  const int64_t d[1] = {1};
  const int64_t v[1] = {5};
  initializer(g, "I", I64, 1, d, v, sizeof v);
}
static void ka_gather_index_out_of_range(buf* m) {
  one_op(m, "Gather", (const char* const[]){"X", "I", NULL}, NULL, ex_idx, 13);
}
static void ex_gemm_b(buf* g) {
  const int64_t d[2] = {4, 4};
  float v[16] = {0};
  init_b(g, F, 2, d, v, sizeof v);
}
static void ka_gemm_inner_dims_differ(buf* m) {
  one_op(m, "Gemm", (const char* const[]){"X", "B", NULL}, NULL, ex_gemm_b, 13);
}
static void ex_expand_huge(buf* g) {
  const int64_t d[1] = {4};
  const int64_t v[4] = {4096, 4096, 1, 1}; /* [4096,4096,2,3] float: 384 MiB > 256M */
  initializer(g, "S", I64, 1, d, v, sizeof v);
}
static void ka_expand_beyond_max_memory(buf* m) {
  one_op(m, "Expand", (const char* const[]){"X", "S", NULL}, NULL, ex_expand_huge, 13);
}

static void ex_resize_scales(buf* g) {
  const int64_t d[1] = {2};
  const float v[2] = {1.0f, 1.0e8f}; /* [2,3] -> [2,300000000] float: 2.4 GB */
  initializer(g, "S", F, 1, d, v, sizeof v);
}
static void ka_resize_to_2gib_beyond_max_memory(buf* m) {
  one_op(m, "Resize", (const char* const[]){"X", "", "S", NULL}, NULL, ex_resize_scales, 13);
}

/* run inputs (on the valid model) */
/* clang-format off */
static const bad_case kCases[] = {
    {"pb_empty_buffer", pb_empty, AT_CREATE, 0, 0, {0}, 0, EPCTX_INVALID_PROTOBUF, "empty"},
    {"pb_truncated_model", pb_truncated_half, AT_CREATE, 0, 0, {0}, 0, EPCTX_INVALID_PROTOBUF, "runs past the end"},
    {"pb_overlong_varint", pb_overlong_varint, AT_CREATE, 0, 0, {0}, 0, EPCTX_INVALID_PROTOBUF, "overlong varint"},
    {"pb_length_past_end", pb_length_past_end, AT_CREATE, 0, 0, {0}, 0, EPCTX_INVALID_PROTOBUF, "length 127"},
    {"pb_group_wire_type", pb_group_wire_type, AT_CREATE, 0, 0, {0}, 0, EPCTX_INVALID_PROTOBUF, "wire type 3"},
    {"pb_reserved_wire_type", pb_reserved_wire_type, AT_CREATE, 0, 0, {0}, 0, EPCTX_INVALID_PROTOBUF, "wire type 6"},
    {"pb_graph_as_varint", pb_graph_as_varint, AT_CREATE, 0, 0, {0}, 0, EPCTX_INVALID_PROTOBUF, "ModelProto.graph"},
    {"pb_model_without_graph", pb_no_graph, AT_CREATE, 0, 0, {0}, 0, EPCTX_INVALID_PROTOBUF, "has no graph"},
    {"pb_string_field_as_varint", pb_node_name_as_varint, AT_CREATE, 0, 0, {0}, 0, EPCTX_INVALID_PROTOBUF, "NodeProto.name"},
    {"pb_negative_dim_value", pb_negative_dim, AT_CREATE, 0, 0, {0}, 0, EPCTX_INVALID_PROTOBUF, "negative dim_value -3"},
    {"pb_trailing_garbage", pb_trailing_garbage, AT_CREATE, 0, 0, {0}, 0, EPCTX_INVALID_PROTOBUF, "truncated tag"},
    {"gr_unnamed_initializer", gr_unnamed_initializer, AT_CREATE, 0, 0, {0}, 0, EPCTX_INVALID_GRAPH, "has no name"},
    {"gr_unnamed_graph_input", gr_unnamed_input, AT_CREATE, 0, 0, {0}, 0, EPCTX_INVALID_GRAPH, "has no name"},
    {"gr_unnamed_graph_output", gr_unnamed_output, AT_CREATE, 0, 0, {0}, 0, EPCTX_INVALID_GRAPH, "has no name"},
    {"gr_16mib_of_empty_value_infos_load", gr_empty_value_infos_16mib, AT_CREATE, 0, 0, {0}, 0, EPCTX_OK, ""},
    {"gr_node_input_defined_nowhere", gr_undefined_node_input, AT_CREATE, 0, 0, {0}, 0, EPCTX_INVALID_GRAPH, "nowhere"},
    {"gr_value_produced_twice", gr_output_produced_twice, AT_CREATE, 0, 0, {0}, 0, EPCTX_INVALID_GRAPH, "'Y'"},
    {"gr_cycle", gr_cycle, AT_CREATE, 0, 0, {0}, 0, EPCTX_INVALID_GRAPH, "cycle"},
    {"gr_unknown_op", gr_unknown_op, AT_CREATE, 0, 0, {0}, 0, EPCTX_MODEL_REQUIRES_COMPILATION, "NoSuchOp"},
    {"gr_unknown_domain", gr_unknown_domain, AT_CREATE, 0, 0, {0}, 0, EPCTX_MODEL_REQUIRES_COMPILATION, "com.example"},
    {"gr_no_nodes_no_outputs", gr_no_nodes_no_outputs, AT_CREATE, 0, 0, {0}, 0, EPCTX_INVALID_GRAPH, "no nodes"},
    {"gr_output_never_produced", gr_output_never_produced, AT_CREATE, 0, 0, {0}, 0, EPCTX_INVALID_GRAPH, "'Z'"},
    {"gr_opset_zero", gr_opset_zero, AT_CREATE, 0, 0, {0}, 0, EPCTX_MODEL_REQUIRES_COMPILATION, "opset 0"},
    {"tn_rank_nine_input", tn_rank_nine_input, AT_CREATE, 0, 0, {0}, 0, EPCTX_NOT_IMPLEMENTED, "rank"},
    {"tn_raw_data_shorter_than_dims", tn_raw_data_short, AT_CREATE, 0, 0, {0}, 0, EPCTX_INVALID_PROTOBUF, "'B'"},
    {"tn_dims_product_overflows", tn_dims_product_overflows, AT_CREATE, 0, 0, {0}, 0, EPCTX_INVALID_PROTOBUF, "overflows"},
    {"tn_initializer_dtype_undefined", tn_initializer_dtype_undefined, AT_CREATE, 0, 0, {0}, 0, EPCTX_NOT_IMPLEMENTED, "data type 0"},
    {"tn_initializer_dtype_unknown", tn_initializer_dtype_unknown, AT_CREATE, 0, 0, {0}, 0, EPCTX_NOT_IMPLEMENTED, "data type 999"},
    {"tn_bool_initializer_byte_two", tn_bool_initializer_byte_two, AT_CREATE, 0, 0, {0}, 0, EPCTX_INVALID_GRAPH, "'B'"},
    {"tn_external_data_in_buffer_model", tn_external_data_in_buffer_model, AT_CREATE, 0, 0, {0}, 0, EPCTX_INVALID_ARGUMENT, "loaded from a buffer"},
    {"tn_sparse_initializer", tn_sparse_initializer, AT_CREATE, 0, 0, {0}, 0, EPCTX_NOT_IMPLEMENTED, "sparse"},
    {"ka_transpose_perm_too_short", ka_transpose_perm_short, AT_RUN, 0, 0, {0}, 0, EPCTX_INVALID_ARGUMENT, "perm"},
    {"ka_transpose_perm_repeats_an_axis", ka_transpose_perm_repeats, AT_RUN, 0, 0, {0}, 0, EPCTX_INVALID_ARGUMENT, "perm"},
    {"ka_attribute_of_wrong_type", ka_perm_as_float, AT_RUN, 0, 0, {0}, 0, EPCTX_INVALID_GRAPH, "perm"},
    {"ka_softmax_axis_out_of_range", ka_softmax_axis_out_of_range, AT_RUN, 0, 0, {0}, 0, EPCTX_INVALID_ARGUMENT, "axis"},
    {"ka_reshape_to_wrong_element_count", ka_reshape_to_wrong_count, AT_RUN, 0, 0, {0}, 0, EPCTX_INVALID_ARGUMENT, "16 elements"},
    {"ka_gather_index_out_of_range", ka_gather_index_out_of_range, AT_RUN, 0, 0, {0}, 0, EPCTX_INVALID_ARGUMENT, "indices[0] = 5"},
    {"ka_gemm_inner_dims_differ", ka_gemm_inner_dims_differ, AT_RUN, 0, 0, {0}, 0, EPCTX_INVALID_ARGUMENT, "inner dimensions differ"},
    {"ka_expand_beyond_max_memory", ka_expand_beyond_max_memory, AT_RUN, 0, 0, {0}, 0, EPCTX_OUT_OF_MEMORY, "epctx.max_memory_bytes"},
    {"ka_resize_to_2gib_beyond_max_memory", ka_resize_to_2gib_beyond_max_memory, AT_RUN, 0, 0, {0}, 0, EPCTX_OUT_OF_MEMORY, "epctx.max_memory_bytes"},
    {"run_input_wrong_dtype", base, AT_RUN, I64, 2, {2, 3}, 0, EPCTX_INVALID_ARGUMENT, "'X'"},
    {"run_input_wrong_rank", base, AT_RUN, F, 3, {2, 3, 1}, 0, EPCTX_INVALID_ARGUMENT, "'X'"},
    {"run_input_wrong_dims", base, AT_RUN, F, 2, {3, 2}, 0, EPCTX_INVALID_ARGUMENT, "'X'"},
};
/* clang-format on */

static int g_print; /* EPCTX_BAD_INPUTS_PRINT=1: print what each case gets */

static void run_case(void** state) {
  const bad_case* c = *state;
  buf m = {0};
  c->build(&m);
  epctx_env* env = NULL;
  assert_null(epctx_env_create(NULL, 0, &env));
  epctx_session_options* o = NULL;
  assert_null(epctx_session_options_create(&o));
  assert_null(epctx_session_options_set(o, "epctx.max_memory_bytes", "256M"));
  epctx_session* s = NULL;
  epctx_status* st = epctx_session_create_from_buffer(env, m.p, m.n, o, &s);
  epctx_session_options_release(o);
  if (!st && c->when == AT_RUN) {
    int dtype = c->x_dtype ? c->x_dtype : F;
    size_t rank = c->x_dtype ? (size_t)c->x_rank : 2;
    const int64_t* dims = c->x_dtype ? c->x_dims : k23;
    size_t n = 1;
    for (size_t i = 0; i < rank; ++i) n *= (size_t)dims[i];
    uint64_t x[64] = {0};
    epctx_tensor* in = NULL;
    assert_null(
        epctx_tensor_wrap(env, (epctx_dtype)dtype, dims, rank, x, n * (dtype == I64 ? 8 : 4), &in));
    const char* in_name = "X";
    const char* out_name = "Y";
    epctx_tensor* y = NULL;
    st = epctx_session_run(s, &in_name, (const epctx_tensor* const*)&in, 1, &out_name, &y, 1);
    epctx_tensor_release(y);
    epctx_tensor_release(in);
  }
  int code = st ? epctx_status_code(st) : EPCTX_OK;
  const char* msg = st ? epctx_status_message(st) : "";
  if (g_print) printf("%-40s %-28s %s\n", c->name, epctx_code_name(code), msg);
  if (code != c->code || !strstr(msg, c->fragment))
    fail_msg("%s: expected %s with \"%s\", got %s: %s", c->name, epctx_code_name(c->code),
             c->fragment, epctx_code_name(code), msg);
  if (code != EPCTX_OK) assert_true(msg[0] != '\0'); /* every failure says why */
  epctx_status_release(st);
  epctx_session_release(s);
  epctx_env_release(env);
  free(m.p);
}

int main(void) {
  g_print = getenv("EPCTX_BAD_INPUTS_PRINT") != NULL;
  enum { N = sizeof kCases / sizeof kCases[0] };
  struct CMUnitTest tests[N];
  for (size_t i = 0; i < N; ++i) {
    struct CMUnitTest t = {kCases[i].name, run_case, NULL, NULL, (void*)&kCases[i]};
    tests[i] = t;
  }
  return _cmocka_run_group_tests("bad_inputs", tests, N, NULL, NULL);
}
