/* placeholder, replaced in step 3 */
int main(void) { return 0; }
