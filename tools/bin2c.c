/* Embeds Lua sources into the module: for each file lua/NAME.lua, an
 * entry {"NAME", bytes, length} of nd_lua_sources[]. */
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv) {
  printf("#include <stddef.h>\n");
  for (int i = 1; i < argc; i++) {
    FILE *f = fopen(argv[i], "rb");
    if (!f) { perror(argv[i]); return 1; }
    printf("static const char src%d[] = {", i);
    int c, n = 0;
    while ((c = fgetc(f)) != EOF) printf("%s%d,", n++ % 20 ? "" : "\n", c);
    printf("0};\n");
    fclose(f);
  }
  printf("const struct nd_lua_source { const char *name; const char *src; "
         "size_t len; } nd_lua_sources[] = {\n");
  for (int i = 1; i < argc; i++) {
    const char *base = strrchr(argv[i], '/');
    base = base ? base + 1 : argv[i];
    size_t len = strlen(base);
    if (len > 4 && !strcmp(base + len - 4, ".lua")) len -= 4;
    printf("  {\"%.*s\", src%d, sizeof src%d - 1},\n", (int)len, base, i, i);
  }
  printf("  {NULL, NULL, 0}};\n");
  return 0;
}
