ffffffff82000000 T _text
ffffffff82001000 t __pfx_vfs_read
ffffffff82001010 T vfs_read
ffffffff82001300 T ksys_read
ffffffff82001500 T __x64_sys_read
ffffffff82001700 t do_sys_openat2
ffffffff82001900 t path_openat.isra.0.cold.7
ffffffff82001b00 t link_path_walk.part.3
ffffffff82001d00 T __x64_sys_getppid
ffffffff82001f00 t kmem_cache_free
ffffffffc0001000 t tgt_open	[okcov_target]
ffffffffc0001100 t tgt_helper.constprop.3	[okcov_target]
