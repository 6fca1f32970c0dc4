/* python3.11 for a foreign architecture under qemu-user: Debian's
 * interpreter binary for it cannot be installed beside the host's, so this
 * is one, around Debian's libpython3.11.so (PYTHONHOME says where its
 * standard library is). */
#include <Python.h>

int main(int argc, char **argv)
{
    return Py_BytesMain(argc, argv);
}
