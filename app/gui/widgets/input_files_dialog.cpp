#include "widgets/input_files_dialog.h"

#include "core/errors.h"
#include "core/npy.h"
#include "core/problem.h"

#include <QDialogButtonBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QGridLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QVBoxLayout>

namespace flashviz::gui {

namespace {

struct RoleText {
    const char* label;
    const char* objectName;
    const char* tip;
};
constexpr RoleText kRoles[] = {
    {QT_TRANSLATE_NOOP("InputFilesDialog", "Q"), "qFile",
     QT_TRANSLATE_NOOP("InputFilesDialog", "The queries: (n_q, d), or (h, n_q, d)")},
    {QT_TRANSLATE_NOOP("InputFilesDialog", "K"), "kFile",
     QT_TRANSLATE_NOOP("InputFilesDialog", "The keys: (n_k, d), or (h, n_k, d)")},
    {QT_TRANSLATE_NOOP("InputFilesDialog", "V"), "vFile",
     QT_TRANSLATE_NOOP("InputFilesDialog", "The values: (n_k, d), or (h, n_k, d)")},
    {QT_TRANSLATE_NOOP("InputFilesDialog", "dO (optional)"), "doFile",
     QT_TRANSLATE_NOOP("InputFilesDialog",
                       "The backward's upstream gradient, shaped as Q; without it dO is drawn "
                       "from the seed")},
};

} // namespace

InputFilesDialog::InputFilesDialog(const std::optional<InputFiles>& current, QColor errorColor,
                                   QWidget* parent)
    : QDialog(parent), m_errorColor(errorColor) {
    setObjectName(QStringLiteral("inputFilesDialog"));
    setWindowTitle(tr("Q, K, V from .npy files"));
    auto* layout = new QVBoxLayout(this);
    auto* intro = new QLabel(
        tr("NumPy arrays saved with numpy.save: float32 or float64 in C order, each (n, d), or "
           "(h, n, d) with the head index choosing one head. The sizes n_q, n_k and d are the "
           "files'."),
        this);
    intro->setWordWrap(true);
    layout->addWidget(intro);
    auto* grid = new QGridLayout;
    grid->setColumnStretch(1, 1);
    for (int role = 0; role < RoleCount; ++role)
        addFileRow(Role(role), grid);
    m_head = new QSpinBox(this);
    m_head->setObjectName(QStringLiteral("head"));
    m_head->setRange(-1, kMaxNpyHeads - 1);
    m_head->setSpecialValueText(tr("none (2-D files)"));
    m_head->setValue(-1);
    m_head->setToolTip(tr("The head of (h, n, d) files, 0 to h − 1; a 2-D file is one head"));
    auto* headLabel = new QLabel(tr("head index"), this);
    headLabel->setBuddy(m_head);
    const int headRow = 2 * RoleCount;
    grid->addWidget(headLabel, headRow, 0);
    grid->addWidget(m_head, headRow, 1, Qt::AlignLeft);
    layout->addLayout(grid);
    m_problem = new QLabel(this);
    m_problem->setObjectName(QStringLiteral("inputFilesProblem"));
    m_problem->setWordWrap(true);
    m_problem->setTextFormat(Qt::PlainText);
    layout->addWidget(m_problem);
    m_buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
    m_buttons->button(QDialogButtonBox::Ok)->setText(tr("Use these files"));
    connect(m_buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(m_buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    layout->addWidget(m_buttons);
    if (current) {
        m_rows[Q].path->setText(QString::fromStdString(current->q));
        m_rows[K].path->setText(QString::fromStdString(current->k));
        m_rows[V].path->setText(QString::fromStdString(current->v));
        m_rows[Upstream].path->setText(QString::fromStdString(current->upstream));
        m_head->setValue(current->head.value_or(-1));
    }
    connect(m_head, &QSpinBox::valueChanged, this, &InputFilesDialog::check);
    resize(720, sizeHint().height());
    check();
}

void InputFilesDialog::addFileRow(Role role, QGridLayout* grid) {
    const RoleText& text = kRoles[role];
    Row& row = m_rows[std::size_t(role)];
    row.path = new QLineEdit(this);
    row.path->setObjectName(QLatin1String(text.objectName));
    row.path->setToolTip(tr(text.tip));
    row.path->setPlaceholderText(role == Upstream ? tr("none: dO from the seed")
                                                  : tr("choose an .npy file"));
    row.path->setClearButtonEnabled(true);
    auto* label = new QLabel(tr(text.label), this);
    label->setBuddy(row.path);
    auto* browseButton = new QPushButton(tr("Browse…"), this);
    browseButton->setObjectName(QLatin1String(text.objectName) + QStringLiteral("Browse"));
    row.status = new QLabel(this);
    row.status->setObjectName(QLatin1String(text.objectName) + QStringLiteral("Status"));
    row.status->setWordWrap(true);
    row.status->setTextFormat(Qt::PlainText);
    grid->addWidget(label, 2 * role, 0);
    grid->addWidget(row.path, 2 * role, 1);
    grid->addWidget(browseButton, 2 * role, 2);
    grid->addWidget(row.status, 2 * role + 1, 1, 1, 2);
    connect(row.path, &QLineEdit::editingFinished, this, &InputFilesDialog::check);
    connect(browseButton, &QPushButton::clicked, this, [this, role] { browse(role); });
}

void InputFilesDialog::browse(Role role) {
    const QString start = m_rows[std::size_t(role)].path->text();
    const QString chosen =
        QFileDialog::getOpenFileName(this, tr("%1 from an .npy file").arg(tr(kRoles[role].label)),
                                     start.isEmpty() ? QString() : QFileInfo(start).path(),
                                     tr("NumPy arrays (*.npy);;All files (*)"));
    if (!chosen.isEmpty()) setPath(role, chosen);
}

void InputFilesDialog::setPath(Role role, const QString& path) {
    m_rows[std::size_t(role)].path->setText(path);
    check();
}

// Absolute, as the command line makes them: settings and sessions must name the same files
// whatever folder the window is started in next.
InputFiles InputFilesDialog::files() const {
    const auto path = [this](Role role) {
        const QString typed = m_rows[std::size_t(role)].path->text().trimmed();
        return typed.isEmpty() ? std::string() : QFileInfo(typed).absoluteFilePath().toStdString();
    };
    InputFiles files{path(Q), path(K), path(V), path(Upstream), std::nullopt};
    if (m_head->value() >= 0) files.head = m_head->value();
    return files;
}

void InputFilesDialog::showStatus(QLabel* label, const QString& text, bool bad) {
    label->setText(text);
    QPalette pal = label->palette();
    pal.setColor(QPalette::WindowText, bad ? m_errorColor : palette().color(QPalette::WindowText));
    label->setPalette(pal);
}

// Each file's header (its dtype and shape, or what is wrong with it), then the files together.
void InputFilesDialog::check() {
    const InputFiles chosen = files();
    bool allRead = true;
    for (int role = 0; role < RoleCount; ++role) {
        const Row& row = m_rows[std::size_t(role)];
        const std::string path = row.path->text().trimmed().toStdString();
        if (path.empty()) {
            allRead = allRead && role == Upstream;
            showStatus(row.status,
                       role == Upstream
                           ? tr("optional: without it the backward draws dO from the seed")
                           : tr("required"),
                       false);
            continue;
        }
        try {
            const NpyHeader header = loadNpyHeader(path);
            showStatus(row.status, QString::fromStdString(describe(header)), false);
        } catch (const EngineError& e) {
            allRead = false;
            // Beside its own field the message need not name the file again.
            QString message = QString::fromUtf8(e.what());
            const QString named = QString::fromStdString(path) + QStringLiteral(": ");
            if (message.startsWith(named)) message = message.mid(named.size());
            showStatus(row.status, message, true);
        }
    }
    m_fit = false;
    if (!allRead) {
        showStatus(m_problem, tr("Choose Q, K and V."), false);
    } else {
        try {
            const ProblemSpec spec = withInputFiles(ProblemSpec{}, chosen);
            m_fit = true;
            showStatus(m_problem,
                       tr("The problem: n_q = %1, n_k = %2, d = %3%4.")
                           .arg(spec.queries)
                           .arg(spec.keys)
                           .arg(spec.headDim)
                           .arg(chosen.upstream.empty() ? QString() : tr(", dO from its file")),
                       false);
        } catch (const EngineError& e) {
            showStatus(m_problem, QString::fromUtf8(e.what()), true);
        }
    }
    m_buttons->button(QDialogButtonBox::Ok)->setEnabled(m_fit);
}

bool InputFilesDialog::filesFit() const {
    return m_fit;
}

QString InputFilesDialog::problemText() const {
    return m_problem->text();
}

QString InputFilesDialog::fileText(int role) const {
    return m_rows[std::size_t(role)].status->text();
}

} // namespace flashviz::gui
