/* Storage of the counters declared in recipe_counters.h. */
#include "recipe_counters.h"

uint64_t hmsim_recipe_flushes, hmsim_recipe_fences, hmsim_recipe_ntstores;
