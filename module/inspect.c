// SPDX-License-Identifier: GPL-2.0
/*
 * Root's inspection files under /sys/kernel/debug/okcov/ (plan, copy):
 * write an address, read the text its maker wrote for it. The maker runs
 * at the write, so that the write fails with its errno; each open file
 * keeps its own last text. The text grows as it is written.
 */

#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "okcov.h"

/* Room for @more characters past t->len: 0 or -ENOMEM. */
static int okcov_text_reserve(struct okcov_text *t, size_t more)
{
	size_t cap = max(2 * t->cap, t->len + more + 1);
	char *buf;

	if (t->len + more < t->cap)
		return 0;
	buf = kvmalloc(cap, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	if (t->len)
		memcpy(buf, t->buf, t->len);
	kvfree(t->buf);
	t->buf = buf;
	t->cap = cap;
	return 0;
}

void okcov_text_printf(struct okcov_text *t, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (t->err)
		return;
	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	t->err = okcov_text_reserve(t, n);
	if (t->err)
		return;
	va_start(ap, fmt);
	vsnprintf(t->buf + t->len, t->cap - t->len, fmt, ap);
	va_end(ap);
	t->len += n;
}

static void okcov_text_reset(struct okcov_text *t)
{
	kvfree(t->buf);
	memset(t, 0, sizeof(*t));
}

static int okcov_inspect_open(struct inode *inode, struct file *file)
{
	file->private_data = kzalloc(sizeof(struct okcov_text), GFP_KERNEL);
	return file->private_data ? 0 : -ENOMEM;
}

static int okcov_inspect_release(struct inode *inode, struct file *file)
{
	okcov_text_reset(file->private_data);
	kfree(file->private_data);
	return 0;
}

static ssize_t okcov_inspect_write(struct file *file, const char __user *ubuf,
				   size_t count, loff_t *ppos)
{
	okcov_inspect_fn make = file_inode(file)->i_private;
	struct okcov_text *t = file->private_data;
	unsigned long addr;
	int ret;

	ret = kstrtoul_from_user(ubuf, count, 16, &addr);
	if (ret)
		return ret;
	okcov_text_reset(t);
	*ppos = 0;
	ret = make(addr, t);
	if (!ret)
		ret = t->err;
	if (ret)
		okcov_text_reset(t);
	return ret ? ret : count;
}

static ssize_t okcov_inspect_read(struct file *file, char __user *ubuf,
				  size_t count, loff_t *ppos)
{
	struct okcov_text *t = file->private_data;

	if (!t->buf)
		return -ENODATA;
	return simple_read_from_buffer(ubuf, count, ppos, t->buf, t->len);
}

static const struct file_operations okcov_inspect_fops = {
	.owner		= THIS_MODULE,
	.open		= okcov_inspect_open,
	.release	= okcov_inspect_release,
	.write		= okcov_inspect_write,
	.read		= okcov_inspect_read,
	.llseek		= default_llseek,
};

/* @dir: main.c's /sys/kernel/debug/okcov, or NULL without debugfs. */
void okcov_inspect_file(struct dentry *dir, const char *name,
			okcov_inspect_fn make)
{
	if (dir)
		debugfs_create_file(name, 0600, dir, make, &okcov_inspect_fops);
}
