/* Test fixture: a valid shared object that is not a BurnMark plugin (no entry symbol). */
int burnmark_fixture_not_a_plugin(void);
int burnmark_fixture_not_a_plugin(void) {
  return 42;
}
