/*
 * cl100k_base token counting for the tier guests: the pre-tokenizer of jtokkit's Cl100kParser
 * (itself the cl100k regex written out by hand) and tiktoken's byte-pair merge, over the rank and
 * Unicode tables that Cl100kTables.java generates from the jtokkit jar at build time.
 */
#ifndef NX_CL100K_H
#define NX_CL100K_H

#include <stddef.h>
#include <stdint.h>

/* Scratch bytes nx_cl100k_count needs for a text of `len` bytes, 4-aligned (the caller allocates
 * them): five 32-bit words per byte for the merge of a long piece. */
#define NX_CL100K_SCRATCH(len) (((uint64_t)(len) + 2u) * 20u)

/* Number of cl100k_base tokens in s[0..len), as jtokkit's countTokens (special tokens are plain
 * text). Bytes that are not valid UTF-8 count as one code point each. */
uint32_t nx_cl100k_count(const unsigned char *s, size_t len, void *scratch);

#endif
